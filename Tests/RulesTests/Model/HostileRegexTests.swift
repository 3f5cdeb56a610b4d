import LinearRegex
@testable import Rules
import RulesTestSupport
import XCTest

/// The patterns that stall a backtracking engine, through the rules' two regex entry points,
/// against about 100 KB of the input that triggers them: the answers are right and come at once
/// (the proxy once spent ~0.7 s of an event loop per 2 KB request on `^/(a+)+$`). A regression
/// would hang these tests.
final class HostileRegexTests: XCTestCase {
    private let run = String(repeating: "a", count: 100_000)

    /// `path_regex`: the plan's walk searches the path and query of each request.
    func testPathRegexOnHostilePaths() throws {
        let set = try RulesTestSupport.parse("""
            rules:
              - { name: nested, match: { host: "*", path_regex: "^/(a+)+$" }, block: {} }
              - { name: pairs, match: { host: "*", path_regex: "(x+x+)+y" }, map_local: { file: /dev/null } }
              - { name: words, match: { host: "*", path_regex: "^/q=(\\\\w+\\\\s?)*$" }, rewrite: { status: 200 } }
            """)
        let hostile = "http://h.test/" + run + "b?" + String(repeating: "x", count: 100_000)
        let plan = set.plan(for: RulesTestSupport.request(hostile))
        XCTAssertNil(plan.block)
        XCTAssertNil(plan.mapLocal)
        XCTAssertNil(set.plan(for: RulesTestSupport.request("http://h.test/q=" + String(repeating: "ab ", count: 30_000) + "!")).rewrite)
        XCTAssertEqual(set.plan(for: RulesTestSupport.request("http://h.test/" + run)).block?.name, "nested")
        XCTAssertEqual(set.plan(for: RulesTestSupport.request("http://h.test/?" + String(repeating: "x", count: 100_000) + "y"))
            .mapLocal?.name, "pairs")
    }

    /// Rewrite `regex`: a body replacement over a hostile body.
    func testRewriteRegexOnHostileBodies() throws {
        let set = try RulesTestSupport.parse("""
            rules:
              - name: r
                match: { host: "*" }
                rewrite:
                  response_body:
                    - { regex: "(a+)+$", replace: "tail" }
                    - { regex: "(x+x+)+y", replace: "never" }
                    - { regex: "^(\\\\w+\\\\s?)*$", replace: "words" }
            """)
        let replacements = try XCTUnwrap(set.plan(for: RulesTestSupport.request("http://h.test/")).rewrite).action.responseBody
        func rewrite(_ body: String) -> BodyTextRewriter.Outcome {
            BodyTextRewriter.rewrite(Array(body.utf8), contentType: "text/plain", contentEncoding: nil, replacements: replacements)
        }
        // Each body has a "!" the last pattern cannot match, so only the pattern under test acts.
        XCTAssertEqual(rewrite(run + "b!" + String(repeating: "x", count: 50_000)), .unchanged)
        XCTAssertEqual(rewrite("b!" + run), .rewritten(Array("b!tail".utf8)))
        XCTAssertEqual(rewrite(String(repeating: "word ", count: 20_000) + "!"), .unchanged)
        XCTAssertEqual(rewrite(String(repeating: "word ", count: 20_000)), .rewritten(Array("words".utf8)))
    }

    /// A pattern that makes replacing every match quadratic (`b+c|b` over a run of b: ~20 s for
    /// 100 KB) stops at the time limit and the body passes as it came, saying why.
    func testQuadraticReplacementStopsAtTheTimeLimit() throws {
        let replacement = try TextReplacement(pattern: .regex(try LinearRegex("b+c|b")), replacement: "x")
        let outcome = BodyTextRewriter.rewrite(Array(String(repeating: "b", count: 200_000).utf8), contentType: "text/plain",
                                               contentEncoding: nil, replacements: [replacement], timeLimit: .milliseconds(100))
        XCTAssertEqual(outcome, .skipped("a regex replacement ran past 0.1 seconds (its pattern reads far ahead for every match)"))
        XCTAssertEqual(BodyTextRewriter.rewrite(Array("bbcb".utf8), contentType: nil, contentEncoding: nil, replacements: [replacement]),
                       .rewritten(Array("xx".utf8)), "a short body is replaced as usual")
    }
}
