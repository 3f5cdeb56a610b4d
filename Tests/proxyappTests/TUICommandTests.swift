import CaptureStore
import Foundation
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp tui`: what it says when it cannot start. (It running in a real terminal is
/// `TUIEndToEndTests`.)
final class TUICommandTests: XCTestCase {
    func testMissingCaptureNamesTheFix() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-tui-\(UUID()).sqlite").path
        XCTAssertThrowsError(try TUICommand.parse(["--db", missing]).runInTerminal()) { error in
            XCTAssertTrue(error is CLIError, "\(type(of: error))")
            XCTAssertEqual("\(error)", "no capture database at \(missing). Start the proxy with `proxyapp run` first, or pass --db FILE.")
        }
    }

    func testNotATerminalNamesTheAlternatives() throws {
        let directory = try makeTemporaryDirectory().url
        let path = directory.appendingPathComponent("traffic.sqlite").path
        _ = try TrafficDatabase(path: path)
        // Under `swift test` stdin and stdout are pipes or files, never this test's terminal.
        try XCTSkipIf(isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1, "the tests run in a terminal")
        XCTAssertThrowsError(try TUICommand.parse(["--db", path]).runInTerminal()) { error in
            XCTAssertTrue("\(error)".contains("needs a terminal on stdin and stdout"), "\(error)")
            XCTAssertTrue("\(error)".contains("proxyapp run --headless"), "\(error)")
        }
    }

    func testReadOnlyFlagParses() throws {
        let command = try TUICommand.parse(["--db", "/tmp/x.sqlite", "--read-only"])
        XCTAssertTrue(command.readOnly)
        XCTAssertThrowsError(try TUICommand.parse(["--bogus"]))
    }
}
