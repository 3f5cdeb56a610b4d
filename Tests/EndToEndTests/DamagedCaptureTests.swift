import CaptureTestSupport
import Foundation
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
        try DamagedCapture.make(at: path)

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
}
