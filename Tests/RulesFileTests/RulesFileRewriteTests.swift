@testable import Rules
@testable import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// The rewrite action: header edits, status, body replacements; every refusal with its exact
/// text, place and rule.
final class RulesFileRewriteTests: XCTestCase {
    /// A rule named `w` whose `rewrite:` is on line 4 and whose `body` lines follow from line 5,
    /// indented by six spaces.
    private func rewrite(_ body: String) -> String {
        "rules:\n  - name: w\n    match: { host: \"*\" }\n    rewrite:\n"
            + body.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n") + "\n"
    }

    private let label = "rule 1 'w'"

    // MARK: - The action itself

    /// A rewrite with nothing in it is refused at the mapping.
    func testRewriteThatDoesNothing() {
        assertIssue("rules:\n  - name: w\n    match: { host: \"*\" }\n    rewrite: {}\n",
                    issue(4, 14, label, "rewrite does nothing: add request_headers, response_headers, status, request_body or response_body"))
    }

    /// The rewrite itself is a mapping.
    func testRewriteMustBeAMapping() {
        assertIssue("rules:\n  - name: w\n    match: { host: \"*\" }\n    rewrite: [status]\n",
                    issue(4, 14, label, "rewrite must be a mapping (key: value lines), not a list"))
    }

    /// A misspelt key is the one mistake said: "does nothing" would only repeat it.
    func testMisspeltKeyLeavesTheRewriteEmpty() {
        assertIssues("rules:\n  - name: w\n    match: { host: \"*\" }\n    rewrite: { stauts: 200 }\n", [
            issue(4, 16, label, "unknown key 'stauts' in rewrite (did you mean 'status'?)"),
        ])
    }

    /// The rewritten status is 200 to 599.
    func testStatusRange() {
        assertIssue(rewrite("status: 700"), issue(5, 15, label, "rewrite status must be a number from 200 to 599, not '700'"))
    }

    // MARK: - Headers

    /// Content-Length and Transfer-Encoding can be neither set, added nor removed, in any case.
    func testFramingHeadersAreRefused() {
        assertIssues(rewrite("""
            request_headers:
              set: { Content-Length: "1" }
              add: { transfer-encoding: chunked }
            response_headers:
              remove: [X-A, TRANSFER-ENCODING]
            """), [
                issue(6, 16, label, "Content-Length cannot be set by rules: the proxy manages the framing and connection headers (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade)"),
                issue(7, 16, label, "transfer-encoding cannot be set by rules: the proxy manages the framing and connection headers (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade)"),
                issue(9, 23, label, "TRANSFER-ENCODING cannot be set by rules: the proxy manages the framing and connection headers (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade)"),
            ])
    }

    /// Header names are tokens: no spaces, no colons, not empty, and text.
    func testHeaderNames() {
        let message = "is not a header name (letters, digits and -, no spaces or colons)"
        assertIssues(rewrite("""
            request_headers:
              set: { "X Debug": "1", "X:Y": "2", "": "3", [a]: "4" }
              remove: "X A"
            """), [
                issue(6, 16, label, "'X Debug' \(message)"),
                issue(6, 32, label, "'X:Y' \(message)"),
                issue(6, 44, label, "'' \(message)"),
                issue(6, 53, label, "a header name in request_headers set must be text, not a list"),
                issue(7, 17, label, "'X A' \(message)"),
            ])
    }

    /// Header values are single lines of text.
    func testHeaderValues() {
        assertIssues(rewrite("""
            response_headers:
              add: { X-A: "a\\nb", X-B: ~, X-C: [ok, "c\\rd"] }
            """), [
                issue(6, 21, label, "the value of X-A must be one line without control characters"),
                issue(6, 34, label, "the value of X-B must be text, not nothing"),
                issue(6, 47, label, "the value of X-C must be one line without control characters"),
            ])
    }

    /// The header edit sections and their members have their shapes.
    func testHeaderEditShapes() {
        assertIssue(rewrite("request_headers: [a]"),
                    issue(5, 24, label, "request_headers must be a mapping (key: value lines), not a list"))
        assertIssue(rewrite("request_headers:\n  set: [a]"),
                    issue(6, 14, label, "request_headers set must be a mapping of header names to values, e.g. { X-Debug: \"1\" }"))
        assertIssue(rewrite("response_headers:\n  sett: { A: b }"),
                    issue(6, 9, label, "unknown key 'sett' in response_headers (did you mean 'set'?)"))
        assertIssue(rewrite("response_headers:\n  remove: []"),
                    issue(6, 17, label, "response_headers remove is an empty list: give at least one value or remove the key"))
    }

    /// Values of one header come in order, a list giving several values of one name.
    func testHeaderValuesKeepTheirOrder() throws {
        let rules = try RulesTestSupport.parse(rewrite("""
            response_headers:
              set: { X-A: [one, two], X-B: three }
              add: { Set-Cookie: [a=1, b=2] }
              remove: Server
            """))
        guard case .rewrite(let action) = rules.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(action.responseHeaders.set.map { "\($0.name): \($0.value)" }, ["X-A: one", "X-A: two", "X-B: three"])
        XCTAssertEqual(action.responseHeaders.add.map { "\($0.name): \($0.value)" }, ["Set-Cookie: a=1", "Set-Cookie: b=2"])
        XCTAssertEqual(action.responseHeaders.remove, ["Server"])
        XCTAssertTrue(action.requestHeaders.isEmpty)
    }

    // MARK: - Body replacements

    /// Each malformed replacement is reported at itself, with the body it belongs to.
    func testReplacementProblems() {
        assertIssues(rewrite("""
            response_body:
              - { find: a, regex: b, replace: c }
              - { replace: c }
              - { find: a }
              - { find: "", replace: c }
              - { regex: "(", replace: c }
              - x
              - { find: a, with: b }
            """), [
                issue(6, 11, label, "give either find (literal text) or regex, not both"),
                issue(7, 11, label, "a response_body replacement needs find: (literal text) or regex:, and replace:"),
                issue(8, 11, label, "a response_body replacement needs replace: (the new text; \"\" to delete)"),
                issue(9, 19, label, "find must be non-empty text"),
                issue(10, 21, label, "regex '(': missing ) to close the group opened here"),
                issue(11, 11, label, "a response_body replacement must be a mapping (key: value lines), not 'x'"),
                issue(12, 22, label, "unknown key 'with' in a response_body replacement (expected one of: find, regex, replace)"),
            ])
    }

    /// A find or replace of the wrong type is said once.
    func testReplacementTypes() {
        assertIssues(rewrite("""
            request_body:
              - { find: [a], replace: b }
              - { find: a, replace: [b] }
            """), [
                issue(6, 19, label, "find must be text, not a list"),
                issue(7, 31, label, "replace must be text, not a list"),
            ])
        assertIssue(rewrite("request_body: []"),
                    issue(5, 21, label, "request_body is an empty list: give at least one value or remove the key"))
    }

    /// Replacements come as a list, or one alone as a mapping (`replace: ~` deletes).
    func testReplacementsAreAList() throws {
        let single = try RulesTestSupport.parse(rewrite("request_body: { find: secret, replace: ~ }"))
        guard case .rewrite(let one) = single.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(one.requestBody.count, 1)
        XCTAssertEqual(one.requestBody.first?.apply(to: "a secret"), "a ")
        let rules = try RulesTestSupport.parse(rewrite("request_body: [{ find: secret, replace: ~ }]"))
        guard case .rewrite(let action) = rules.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(action.requestBody.count, 1)
        XCTAssertEqual(action.requestBody.first?.replacement, "")
        XCTAssertEqual(action.requestBody.first?.apply(to: "a secret b"), "a  b")
    }
}

extension RulesFileRewriteTests {
    /// Statuses without a body cannot replace one that has a body (the origin's is still sent),
    /// nor answer with a map-local file; a block rule may use them (it sends no body then).
    func testBodylessStatusesAreRefusedWhereABodyFollows() throws {
        assertIssue("rules:\n  - name: w\n    match: { host: \"*\" }\n    rewrite: { status: 304 }\n",
                    issue(4, 24, "rule 1 'w'",
                          "rewrite status 304 cannot carry a body, and the origin's body is still sent: use another status"))
        let folder = try makeTemporaryDirectory().url
        try Data("x".utf8).write(to: folder.appendingPathComponent("f.txt"))
        assertIssue("rules:\n  - name: w\n    match: { host: \"*\" }\n    map_local: { file: f.txt, status: 204 }\n",
                    issue(4, 39, "rule 1 'w'", "map_local status 204 cannot carry a body, and it answers with the file: use another status"),
                    base: folder.path)
        XCTAssertNoThrow(try RulesTestSupport.parse("rules:\n  - match: { host: \"*\" }\n    block: { status: 204 }\n"))
    }
}
