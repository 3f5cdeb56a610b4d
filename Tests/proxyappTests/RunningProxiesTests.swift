import Foundation
import ProxyTLS
import TestSupport
import XCTest
@testable import proxyapp
#if canImport(Glibc)
import Glibc
#endif

/// The running-proxy marker: held markers are found with their pid and address, leftovers of
/// killed processes are ignored, and `ca regenerate` / `ca import` refuse while a proxy holds one
/// (leaving the CA untouched). The end-to-end test with a real `proxyapp run` and `kill -9` is
/// `CARegenerateWhileRunningTests`.
final class RunningProxiesTests: XCTestCase {
    private var dataDirectory: URL!

    override func setUpWithError() throws {
        dataDirectory = try makeTemporaryDirectory().url
    }

    private var store: CertificateAuthorityStore {
        CertificateAuthorityStore(directory: dataDirectory.appendingPathComponent("ca"))
    }

    /// A marker is found while held, with the address once it is known, and gone once released.
    func testHeldMarkerIsFoundUntilReleased() throws {
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [])
        let marker = try RunningProxies.mark(dataDirectory: dataDirectory)
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [.init(pid: getpid(), listen: "(starting)")])
        marker.update(listen: "127.0.0.1:8080")
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [.init(pid: getpid(), listen: "127.0.0.1:8080")])
        let mode = try FileManager.default.attributesOfItem(
            atPath: RunningProxies.directory(in: dataDirectory).path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o700)
        marker.release()
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [])
    }

    /// A marker file nobody holds (its process was killed with -9: the kernel dropped the lock)
    /// means nothing, whatever it says; so do files that are not markers, a symlink and garbage.
    func testLeftoverAndForeignFilesAreIgnored() throws {
        let folder = RunningProxies.directory(in: dataDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "pid=4242\nlisten=127.0.0.1:9\n".write(to: folder.appendingPathComponent("proxy-4242.lock"), atomically: true, encoding: .utf8)
        try "junk".write(to: folder.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("proxy-1.lock").path,
                                                   withDestinationPath: "/etc/passwd")
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [])
        XCTAssertNoThrow(try CARegenerateCommand.parse(["--data-dir", dataDirectory.path]).run())
    }

    /// A lock held through another open file description (as another process holds it) counts,
    /// even when the file's text is garbage: the pid then comes from the file name.
    func testLockHeldElsewhereCountsWithAnyContent() throws {
        let folder = RunningProxies.directory(in: dataDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("proxy-31337.lock").path
        try "\u{1B}]52;c;garbage\u{7}\npid=x\nlisten=\n".write(toFile: path, atomically: true, encoding: .utf8)
        let descriptor = open(path, O_RDWR)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        XCTAssertEqual(flock(descriptor, LOCK_EX | LOCK_NB), 0)
        XCTAssertEqual(RunningProxies.running(in: dataDirectory), [.init(pid: 31337, listen: "an unknown address")])
    }

    /// `ca regenerate` and `ca import` refuse while a proxy runs, naming its pid and address and
    /// saying what to do; the CA stays as it was. After the proxy stops, both work.
    func testCARegenerateAndImportRefuseWhileAProxyRuns() throws {
        let before = try store.loadOrCreate()
        let marker = try RunningProxies.mark(dataDirectory: dataDirectory)
        marker.update(listen: "127.0.0.1:18080")
        XCTAssertThrowsError(try CARegenerateCommand.parse(["--data-dir", dataDirectory.path]).run()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("pid \(getpid()), listening on 127.0.0.1:18080"), text)
            XCTAssertTrue(text.contains("Stop it first"), text)
            XCTAssertTrue(text.contains("proxyapp ca regenerate"), text)
        }
        let foreign = try CertificateAuthority.generate(commonName: "Foreign CA")
        let combined = dataDirectory.appendingPathComponent("foreign-ca.pem").path
        try (try foreign.privateKeyPEM() + foreign.certificatePEM).write(toFile: combined, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CAImportCommand.parse(["--data-dir", dataDirectory.path, "--cert", combined]).run()) { error in
            XCTAssertTrue("\(error)".contains("proxyapp ca import"), "\(error)")
        }
        XCTAssertEqual(try store.load()?.certificateDER, before.certificateDER, "the CA must be untouched")
        marker.release()
        try CARegenerateCommand.parse(["--data-dir", dataDirectory.path]).run()
        XCTAssertNotEqual(try store.load()?.certificateDER, before.certificateDER)
    }

    func testParse() {
        XCTAssertEqual(RunningProxies.parse("pid=12\nlisten=[::1]:8080\n", fallbackPID: 1), .init(pid: 12, listen: "[::1]:8080"))
        XCTAssertEqual(RunningProxies.parse("", fallbackPID: 7), .init(pid: 7, listen: "an unknown address"))
        XCTAssertEqual(RunningProxies.parse("pid=99999999999\n", fallbackPID: 7).pid, 7)
    }
}
