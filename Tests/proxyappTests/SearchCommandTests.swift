import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp search`: matches newest first with their excerpts marked, a count, a filter to
/// narrow them, and every mistake refused in words before the capture is opened.
final class SearchCommandTests: XCTestCase {
    private func capture() throws -> (directory: URL, repository: TrafficRepository) {
        let directory = try makeTemporaryDirectory().url
        let command = try SearchCommand.parse(["--data-dir", directory.path, "x"])
        let repository = TrafficRepository(database: try TrafficDatabase(path: command.data.databasePath))
        let flows = (1...6).map { index in
            Flow(method: index % 2 == 0 ? "POST" : "GET", host: "h\(index).test", path: "/users/\(index)",
                 requestHeaders: [HeaderField(name: "Content-Type", value: "application/json")],
                 requestBody: CapturedBody(bytes: Data("{\"user_id\": \(index * 100), \"note\": \"line\u{1B}[2J one\n two\"}".utf8),
                                           size: 40),
                 status: 200)
        }
        try repository.insert(flows)
        return (directory, repository)
    }

    func testMatchesComeNewestLastOnScreenWithMarkedExcerpts() throws {
        let (directory, repository) = try capture()
        let command = try SearchCommand.parse(["--data-dir", directory.path, "--limit", "2", "user_id"])
        let lines = try command.output(repository, colored: false)
        XCTAssertEqual(lines.count, 1 + 2 * 2 + 1, lines.joined(separator: "\n"))
        XCTAssertTrue(lines[1].hasPrefix("#5 "), lines[1])
        XCTAssertTrue(lines[3].hasPrefix("#6 "), lines[3])
        XCTAssertEqual(lines[4], #"        request body: {"[user]_[id]": 600, "note": "line\x1b[2J one two"}"#)
        XCTAssertEqual(lines.last, "(the newest 2 of 6 matches; --limit N shows more)")

        let colored = try command.output(repository, colored: true)
        XCTAssertTrue(colored[4].contains("\u{1B}[1;4muser\u{1B}[22;24m_\u{1B}[1;4mid\u{1B}[22;24m"), colored[4])
        XCTAssertFalse(colored[4].contains("\u{1B}[2J"), "text from traffic is escaped")

        let narrowed = try SearchCommand.parse(["--data-dir", directory.path, "--filter", "~m POST", "--count", "user", "id"])
        XCTAssertEqual(try narrowed.output(repository, colored: false), ["3"])
        let phrase = try SearchCommand.parse(["--data-dir", directory.path, #""users 3""#])
        XCTAssertEqual(try phrase.output(repository, colored: false).dropFirst().first?.prefix(3), "#3 ")
        let none = try SearchCommand.parse(["--data-dir", directory.path, "nowhere"])
        XCTAssertEqual(try none.output(repository, colored: false), ["No flow matches."])
    }

    func testMistakesAreUsageErrors() {
        let cases: [([String], String)] = [
            ([], "Say what to find, e.g. proxyapp search user_id 123 (see proxyapp search --help)."),
            (["a", "AND"], "bad search: expected a search term at column 6"),
            (["url:("], "bad search: expected a search term at column 6"),
            (["{nope}:", "x"], "bad search: unknown field 'nope' (fields: url, headers, body, request, response) at column 2"),
            (["--limit", "0", "x"], "--limit must be at least 1."),
            (["--filter", "~x", "a"], "bad --filter expression: unknown operator ~x at column 1"),
        ]
        for (arguments, first) in cases {
            XCTAssertThrowsError(try SearchCommand.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual(SearchCommand.exitCode(for: error), .validationFailure)
                XCTAssertEqual(SearchCommand.message(for: error).split(separator: "\n").first.map(String.init), first)
            }
        }
    }
}
