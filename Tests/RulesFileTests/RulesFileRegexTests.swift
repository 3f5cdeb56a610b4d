@testable import Rules
@testable import RulesFile
import RulesTestSupport
import XCTest

/// `path_regex` and rewrite `regex` are RE2: what RE2 cannot run is refused when the file loads,
/// at the construct (line and column), with the rule and a reason in words; `replace` may only
/// name groups the regex has.
final class RulesFileRegexTests: XCTestCase {
    private func rule(_ name: String, match: String, action: String = "block: {}") -> String {
        "  - name: \(name)\n    match: \(match)\n    \(action)\n"
    }

    private let linear = "ProxyApp's regexes run in linear time (RE2 syntax)"

    /// The column points into the pattern when the source spells it one to one: plain,
    /// single-quoted (a doubled quote counts twice), double-quoted without escapes before it.
    func testRefusalColumnsPointAtTheConstruct() {
        // `    match: { host: "*", path_regex: ` is 36 characters: the value starts at column 37.
        assertIssue("rules:\n" + rule("plain", match: "{ host: \"*\", path_regex: ^/(a)\\1 }"),
                    issue(3, 42, "rule 1 'plain'", "path_regex '^/(a)\\1': backreferences like \\1 are not supported: \(linear) (for a character code write \\x0A)"))
        assertIssue("rules:\n" + rule("single", match: "{ host: \"*\", path_regex: '^/it''s(?=x)' }"),
                    issue(3, 45, "rule 1 'single'", "path_regex '^/it's(?=x)': lookahead (?= is not supported: \(linear)"))
        assertIssue("rules:\n" + rule("double", match: "{ host: \"*\", path_regex: \"^/a++\" }"),
                    issue(3, 41, "rule 1 'double'", "path_regex '^/a++': possessive quantifiers like ++ are not supported (drop the last +): \(linear)"))
        // An escape before the construct: the column stays at the value.
        assertIssue("rules:\n" + rule("escaped", match: "{ host: \"*\", path_regex: \"^/\\\\d(?<=1)\" }"),
                    issue(3, 37, "rule 1 'escaped'", "path_regex '^/\\d(?<=1)': lookbehind (?<= is not supported: \(linear)"))
    }

    /// One pass reports every refused regex, in match and in body replacements, each with its rule.
    func testEveryRefusalInOnePass() {
        let yaml = "rules:\n"
            + rule("a", match: "{ host: \"*\", path_regex: \"(?>x)\" }")
            + rule("b", match: "{ host: \"*\" }", action: "rewrite: { response_body: [ { regex: '(\\w+)\\1', replace: x } ] }")
            + rule("c", match: "{ host: \"*\" }", action: "rewrite: { request_body: { regex: '(\\w+)', replace: '$1-$2' } }")
        assertIssues(yaml, [
            issue(3, 38, "rule 1 'a'", "path_regex '(?>x)': atomic groups (?> are not supported: \(linear)"),
            issue(7, 48, "rule 2 'b'", "regex '(\\w+)\\1': backreferences like \\1 are not supported: \(linear) (for a character code write \\x0A)"),
            issue(10, 61, "rule 3 'c'", "replace '$1-$2': $2 names group 2, but the regex has 1 group (write \\$ for a $)"),
        ])
    }

    /// The printed form: FILE:LINE:COL: rule: what and why.
    func testDescription() throws {
        do {
            _ = try RulesFile.parse("rules:\n" + rule("look", match: "{ host: \"*\", path_regex: x(?!y) }"),
                                    file: "rules.yml", baseDirectory: RulesTestSupport.defaultBase)
            XCTFail("parsed")
        } catch {
            XCTAssertEqual(error.description,
                           "rules.yml:3:38: rule 1 'look': path_regex 'x(?!y)': negative lookahead (?! is not supported: \(linear)")
        }
    }

    /// A pattern too large to compile within the memory limit is refused, saying so.
    func testPatternTooLarge() {
        assertIssue("rules:\n" + rule("big", match: "{ host: \"*\", path_regex: '\\pL{1000}' }"),
                    issue(3, 37, "rule 1 'big'",
                          "path_regex '\\pL{1000}': the pattern is too large: compiled, it needs more than the 8 MiB a regex may use; shorten it or use smaller {n} counts"))
    }

    /// The file's regexes share one budget of compiled instructions: past it the rest are refused
    /// (uncompiled), so a file of huge patterns cannot take minutes and gigabytes to load.
    func testRegexesShareABudget() {
        let yaml = "rules:\n" + (1...10).map { rule("r\($0)", match: "{ host: \"*\", path_regex: '\\pL{100}' }") }.joined()
        let message = "path_regex '\\pL{100}': with the regexes before it, this one passes the 1000000 instructions the regexes "
            + "of one rules file or filter may compile to: use fewer or smaller patterns (\\pL, (?i) classes and {n} counts are large)"
        assertIssues(yaml, [issue(27, 37, "rule 9 'r9'", message), issue(30, 37, "rule 10 'r10'", message)])
    }

    /// RE2 syntax that is fine loads and works: ICU's named groups, `$1` templates, inline flags.
    func testSupportedSyntaxLoadsAndWorks() throws {
        let set = try RulesTestSupport.parse("rules:\n"
            + rule("named", match: "{ host: a.com, path_regex: '^/(?<version>v[12])/' }")
            + rule("flags", match: "{ host: b.com, path_regex: '(?i)^/ADMIN' }")
            + rule("swap", match: "{ host: c.com }", action: "rewrite: { response_body: { regex: '(\\w+)=(\\d+)', replace: '$2=$1' } }"))
        XCTAssertEqual(set.plan(for: RulesTestSupport.request("http://a.com/v2/x")).block?.name, "named")
        XCTAssertNil(set.plan(for: RulesTestSupport.request("http://a.com/v3/x")).block)
        XCTAssertEqual(set.plan(for: RulesTestSupport.request("http://b.com/admin/users")).block?.name, "flags")
        XCTAssertNil(set.plan(for: RulesTestSupport.request("http://b.com/x/admin")).block)
        let rewrite = try XCTUnwrap(set.plan(for: RulesTestSupport.request("http://c.com/")).rewrite)
        XCTAssertEqual(BodyTextRewriter.rewrite(Array("a=1&bb=22".utf8), contentType: "text/plain", contentEncoding: nil,
                                                replacements: rewrite.action.responseBody),
                       .rewritten(Array("1=a&22=bb".utf8)))
    }
}
