import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// The filter language's regexes are RE2: what it cannot run is a syntax error at the construct
/// (caret and all), and the patterns that stall a backtracking engine answer at once on ~100 KB
/// of hostile input through every regex predicate. A regression would hang these tests.
final class FilterRegexTests: XCTestCase {
    private let linear = "ProxyApp's regexes run in linear time (RE2 syntax)"

    /// The caret sits under the construct, counted through quotes and escapes; only an unquoted
    /// regex cut short by a space or `)` gets the quoting hint.
    func testRefusalsPointAtTheConstruct() throws {
        let bare = try XCTUnwrap(syntaxError(#"~s ~u a\1 ~q"#))
        XCTAssertEqual(bare.message, #"bad regex "a\1": backreferences like \1 are not supported: "#
            + "\(linear) (for a character code write \\x0A) (quote it if it holds spaces or ')')")
        XCTAssertEqual(bare.position, 7)
        XCTAssertEqual(bare.caretDiagram, "~s ~u a\\1 ~q\n       ^")

        let quoted = try XCTUnwrap(syntaxError(#"~hq "a\"b(?=c)""#))
        XCTAssertEqual(quoted.message, #"bad regex "a"b(?=c)": lookahead (?= is not supported: "# + linear)
        XCTAssertEqual(quoted.position, 9)

        let word = try XCTUnwrap(syntaxError("~q x++"))
        XCTAssertEqual(word.position, 4, "a bare word is a ~u regex, refused at its own character")
        XCTAssertTrue(word.message.contains("possessive quantifiers like ++"), word.message)

        let body = try XCTUnwrap(syntaxError("~bs 'é(?<!x)'"))
        XCTAssertEqual(body.position, 6)
        XCTAssertTrue(body.message.contains("negative lookbehind (?<!"), body.message)

        let rule = try XCTUnwrap(syntaxError("~rule (?>x)"))
        XCTAssertEqual(rule.position, 6)
        XCTAssertTrue(rule.message.contains("atomic groups (?>"), rule.message)
    }

    /// A refusal without a place of its own (a pattern too large) points at the argument.
    func testWholePatternRefusalPointsAtTheArgument() throws {
        let error = try XCTUnwrap(syntaxError(#"~d "\pL{1000}""#))
        XCTAssertEqual(error.position, 3)
        XCTAssertTrue(error.message.contains("the pattern is too large"), error.message)
    }

    /// A filter's regexes share one budget of compiled instructions; the one that passes it is
    /// refused at its argument.
    func testRegexesShareABudget() throws {
        let text = Array(repeating: #"~u "\pL{100}""#, count: 9).joined(separator: " | ")
        let error = try XCTUnwrap(syntaxError(text))
        XCTAssertEqual(error.position, 8 * 16 + 3, "the ninth argument (each term and its \" | \" is 16 characters)")
        XCTAssertTrue(error.message.contains("this one passes the 1000000 instructions"), error.message)
        XCTAssertNoThrow(try FlowFilter(parsing: Array(repeating: #"~u "\pL{100}""#, count: 8).joined(separator: " | ")))
    }

    /// Every regex predicate over ~100 KB of hostile text.
    func testCatastrophicPatternsThroughEveryPredicate() throws {
        let run = String(repeating: "a", count: 100_000)
        let xs = String(repeating: "x", count: 100_000)
        let words = String(repeating: "word ", count: 20_000)
        let flow = Flow(
            kind: .http, method: "GET" + xs, scheme: "http", host: run + "b.test", port: 80, path: "/" + run + "b",
            requestHeaders: [HeaderField(name: "X-Words", value: words + "!")],
            requestBody: CapturedBody(bytes: Data((words + "!").utf8), size: Int64(words.utf8.count + 1)),
            status: 200,
            responseHeaders: [HeaderField(name: "Content-Type", value: "text/" + xs)],
            responseBody: CapturedBody(bytes: Data((run + "\n" + run + "b").utf8), size: Int64(2 * run.utf8.count + 2)),
            appliedRules: [run + "b", xs])
        let misses = [#"~u "(a+)+$""#, #"~d "^(a+)+$""#, #"~m "(x+x+)+y""#, #"~ts "(x+x+)+y""#,
                      #"~hq "^X-Words: (\w+\s?)*$""#, #"~bq "^(\w+\s?)*$""#, #"~bs "^(a+\n?)+$""#, #"~rule "(a+)+$""#,
                      #"~rule "(x+x+)+y""#]
        for text in misses {
            XCTAssertFalse(try FlowFilter(parsing: text).matches(flow), text)
        }
        let hits = [#"~u "(a+)+b$""#, #"~d "^(a+)+b""#, #"~m "(x+x+)+$""#, #"~hq "^X-Words: (\w+\s?)*!$""#,
                    #"~bq "^(\w+\s?)*!$""#, #"~bs "^(a+\n?)+b$""#, #"~rule "^(a+)+b$""#]
        for text in hits {
            XCTAssertTrue(try FlowFilter(parsing: text).matches(flow), text)
        }
    }
}
