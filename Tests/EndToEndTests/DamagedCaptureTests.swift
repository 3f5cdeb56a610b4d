import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// A capture damaged in the middle (a disk error, a copy cut short and patched): the commands
/// that read it fail with a sentence naming the problem, never SQLite's message and the SQL it
/// was running (`proxyapp search` printed "SQLite error 11: database disk image is malformed -
/// while executing `SELECT * FROM flows WHERE id IN (SELECT rowid FROM flows_fts_1 …`").
final class DamagedCaptureTests: XCTestCase {
    func testSearchAndExportOfADamagedCaptureFailInWords() async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                       "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it first")
        let data = try makeTemporaryDirectory("damaged-capture").url
        let path = data.appendingPathComponent("traffic.sqlite").path
        try writeFlows(3_000, to: path)
        try damageTheMiddle(of: path)

        for arguments in [["search", "example"], ["export", "--har", data.appendingPathComponent("out.har").path]] {
            let outcome = try await runProxyApp(executable, arguments + ["--data-dir", data.path])
            XCTAssertNotEqual(outcome.status, 0, "\(arguments[0]): \(outcome.output)")
            XCTAssertTrue(outcome.output.contains("damaged"), "\(arguments[0]): \(outcome.output)")
            for libraryWords in ["SQLite error", "SELECT", "malformed"] {
                XCTAssertFalse(outcome.output.contains(libraryWords), "\(arguments[0]): \(outcome.output)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: data.appendingPathComponent("out.har").path),
                       "a failed export leaves nothing under its name")
    }

    /// Flows with enough header text to fill a few megabytes of pages and their full-text index.
    private func writeFlows(_ count: Int, to path: String) throws {
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let flows = (0..<count).map { index in
            Flow(method: "GET", scheme: "https", host: "api\(index % 50).example.test", port: 443,
                 path: "/v1/items/\(index)?page=\(index % 7)",
                 requestHeaders: (0..<12).map { HeaderField(name: "X-Request-\($0)", value: "value \(index) \($0) words") },
                 status: 200, reason: "OK",
                 responseHeaders: (0..<12).map { HeaderField(name: "X-Response-\($0)", value: "answer \(index) \($0)") })
        }
        _ = try repository.insert(flows)
        try repository.checkpoint()
    }

    /// Overwrites the middle third of the file with a fixed pattern, leaving its header intact.
    private func damageTheMiddle(of path: String) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        XCTAssertGreaterThan(size, 1 << 20, "the capture is large enough to damage in the middle")
        try handle.seek(toOffset: size / 3)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size / 3)))
    }
}
