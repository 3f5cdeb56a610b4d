import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp flows --filter`: a bad expression is a clear error, and the listing keeps the
/// latest matching flows.
final class FlowsCommandTests: XCTestCase {
    /// The error names the option, the problem and its column (from 1), draws a caret under it
    /// and points at the README, before any database is needed; it is a usage error (exit 64)
    /// like any bad flag, for `flows` and `export` alike.
    func testBadFilterShowsTheCaretAndTheReadme() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-cli-\(UUID())")
        XCTAssertThrowsError(try FlowsCommand.parse(["--data-dir", directory.path, "--filter", "~d a & ~x b"])) { error in
            XCTAssertEqual(FlowsCommand.exitCode(for: error), .validationFailure)
            let lines = FlowsCommand.message(for: error).split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.first, "bad --filter expression: unknown operator ~x at column 8")
            XCTAssertEqual(Array(lines.dropFirst().prefix(2)), ["  ~d a & ~x b", "         ^"])
            XCTAssertTrue(lines.last?.contains("\"Filter expressions\" in README.md") == true, "\(error)")
        }
        XCTAssertThrowsError(try FlowsCommand.parse(["--data-dir", directory.path, "--filter", "~c abc"])) {
            XCTAssertTrue("\($0)".contains("~c needs a status code (a number), not 'abc' at column 4"), "\($0)")
        }
        XCTAssertThrowsError(try ExportCommand.parse(["--har", "-", "--filter", "(~d a"])) { error in
            XCTAssertEqual(ExportCommand.exitCode(for: error), .validationFailure)
            XCTAssertTrue(ExportCommand.message(for: error).hasPrefix("bad --filter expression: expected ')' at column 6"),
                          ExportCommand.message(for: error))
        }
        XCTAssertThrowsError(try FlowsCommand.parse(["--filter", "~x \u{1b}[31m"])) { error in
            XCTAssertFalse(FlowsCommand.message(for: error).contains("\u{1b}"), "the expression is shown escaped")
        }
    }

    /// With a filter, `--limit` keeps the newest matching flows, printed oldest first.
    func testLatestMatchingFlows() throws {
        let directory = try makeTemporaryDirectory().url
        let command = try FlowsCommand.parse(["--data-dir", directory.path, "--limit", "3", "--filter", "~m POST"])
        let repository = TrafficRepository(database: try TrafficDatabase(path: command.data.databasePath))
        let flows = (0..<10).map { Flow(method: $0 % 2 == 0 ? "POST" : "GET", host: "h\($0).test") }
        try repository.insert(flows)
        let query = FlowQuery(filter: try FilterArgument.parse(try XCTUnwrap(command.filter)))
        XCTAssertEqual(try command.latestFlows(matching: query, in: repository).map(\.host), ["h4.test", "h6.test", "h8.test"])
        let few = try FlowsCommand.parse(["--limit", "50"])
        XCTAssertEqual(try few.latestFlows(matching: query, in: repository).map(\.host),
                       ["h0.test", "h2.test", "h4.test", "h6.test", "h8.test"])
    }
}
