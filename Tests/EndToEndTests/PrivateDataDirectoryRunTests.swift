import Foundation
import TestSupport
import XCTest

/// The real `proxyapp run` on a data directory an older version (or a permissive umask) left
/// readable by everyone: it starts private, says so once, and the capture it writes is 0600.
final class PrivateDataDirectoryRunTests: XCTestCase {
    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    func testRunTightensALooseDataDirectory() async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable, "build proxyapp first (`swift build --build-tests`)")
        let temporary = try TemporaryDirectory("proxyapp-private-run")
        defer { temporary.remove() }
        let directory = temporary.url
        XCTAssertEqual(chmod(directory.path, 0o755), 0)
        let capture = directory.appendingPathComponent("traffic.sqlite").path
        XCTAssertTrue(FileManager.default.createFile(atPath: capture, contents: Data(), attributes: [.posixPermissions: 0o644]))

        let proxy = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: directory, arguments: ["--no-intercept"])
        let output = proxy.output
        await proxy.stop()
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("data directory: tightened permissions") }
        XCTAssertEqual(lines.count, 1, output)
        XCTAssertTrue(lines.first?.contains("\(directory.path) 755 → 700") == true, output)
        XCTAssertTrue(lines.first?.contains("\(capture) 644 → 600") == true, output)
        XCTAssertEqual(mode(directory.path), 0o700)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: capture + suffix) {
            XCTAssertEqual(mode(capture + suffix), 0o600, "traffic.sqlite\(suffix)")
        }
    }
}
