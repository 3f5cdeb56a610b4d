@testable import Rules
@testable import RulesFile
import RulesTestSupport
import XCTest

/// `match:` (host, port, scheme, method, path, path_regex) and `ssl_proxying:`: every refusal
/// with its exact text, place and rule.
final class RulesFileMatchTests: XCTestCase {
    /// The rule around a `match:` written on line 3 (`    match: ...`) with a block action.
    private func rule(match: String, action: String = "block: {}") -> String {
        "rules:\n  - name: m\n    match: \(match)\n    \(action)\n"
    }

    // MARK: - host

    /// A match without a host says how to match every host.
    func testHostIsRequired() {
        assertIssue(rule(match: "{ port: 80 }"),
                    issue(3, 12, "rule 1 'm'", "match needs a host: write host: \"*\" to match every host"))
    }

    /// HostPattern's own message is passed through, at the pattern.
    func testBadHostPatternMessageIsPassedThrough() {
        assertIssue(rule(match: "{ host: \"example.com:443\" }"), issue(3, 20, "rule 1 'm'",
            "host pattern 'example.com:443' has a port: host patterns take no port; write 'example.com' and put the port in the rule's 'port:' key"))
    }

    /// In a list, each bad pattern is reported at itself and the good ones are not.
    func testBadPatternsInAHostList() {
        assertIssues(rule(match: "{ host: [a.com, \".b.com\", \"https://c.com/x\"] }"), [
            issue(3, 28, "rule 1 'm'",
                  "host pattern '.b.com' starts with a dot: write '*.b.com' for its subdomains, or 'b.com' for the host itself"),
            issue(3, 38, "rule 1 'm'", "host pattern 'https://c.com/x' is a URL: write only the host, 'c.com'"),
        ])
    }

    /// A host must be text or a list of texts: not nothing, not an empty list, not a mapping.
    func testHostTypes() {
        assertIssue(rule(match: "{ host: ~ }"), issue(3, 20, "rule 1 'm'", "host must be text, not nothing"))
        assertIssue(rule(match: "{ host: [] }"),
                    issue(3, 20, "rule 1 'm'", "host is an empty list: give at least one value or remove the key"))
        assertIssue(rule(match: "{ host: { a: b } }"),
                    issue(3, 20, "rule 1 'm'", "host must be a value or a list of values, not a mapping"))
        assertIssue(rule(match: "{ host: [[a.com]] }"), issue(3, 21, "rule 1 'm'", "host must be text, not a list"))
    }

    /// A host list holds at most 1,000 patterns.
    func testHostListLimit() {
        let list = (0...1000).map { "h\($0).com" }.joined(separator: ", ")
        assertIssue(rule(match: "{ host: [\(list)] }"),
                    issue(3, 20, "rule 1 'm'", "host has 1001 entries; at most 1000 are allowed"))
    }

    // MARK: - port, scheme, method

    /// Ports are numbers from 1 to 65535.
    func testPortRange() {
        assertIssue(rule(match: "{ host: \"*\", port: 65536 }"),
                    issue(3, 31, "rule 1 'm'", "port must be a number from 1 to 65535, not '65536'"))
        assertIssue(rule(match: "{ host: \"*\", port: https }"),
                    issue(3, 31, "rule 1 'm'", "port must be a number from 1 to 65535, not 'https'"))
        assertIssue(rule(match: "{ host: \"*\", port: [443] }"),
                    issue(3, 31, "rule 1 'm'", "port must be a number from 1 to 65535, not a list"))
    }

    /// Schemes are http or https (any case); each wrong one is named.
    func testSchemes() throws {
        assertIssue(rule(match: "{ host: \"*\", scheme: [HTTP, ftp] }"),
                    issue(3, 40, "rule 1 'm'", "scheme must be http or https, not 'ftp'"))
        let rules = try RulesTestSupport.parse(rule(match: "{ host: \"*\", scheme: HTTPS }"))
        XCTAssertEqual(rules.rules.first?.match.schemes, ["https"])
    }

    /// Methods are tokens; they are kept upper-case.
    func testMethods() throws {
        assertIssue(rule(match: "{ host: \"*\", method: \"GET POST\" }"),
                    issue(3, 33, "rule 1 'm'", "'GET POST' is not an HTTP method (letters, e.g. GET or POST)"))
        assertIssue(rule(match: "{ host: \"*\", method: \"\" }"),
                    issue(3, 33, "rule 1 'm'", "'' is not an HTTP method (letters, e.g. GET or POST)"))
        let rules = try RulesTestSupport.parse(rule(match: "{ host: \"*\", method: [get, Post] }"))
        XCTAssertEqual(rules.rules.first?.match.methods, ["GET", "POST"])
    }

    // MARK: - path and path_regex

    /// A path starts with `/` or `*`.
    func testPathMustStartWithSlash() {
        assertIssue(rule(match: "{ host: \"*\", path: api/* }"), issue(3, 31, "rule 1 'm'",
            "path 'api/*' must start with / (or *): it is matched against the URL's path, e.g. /api/*"))
        XCTAssertNoThrow(try RulesTestSupport.parse(rule(match: "{ host: \"*\", path: \"*.json\" }")))
    }

    /// path and path_regex exclude each other (reported at path, whichever comes first).
    func testPathAndPathRegexTogether() {
        assertIssue(rule(match: "{ host: \"*\", path: /a, path_regex: b }"),
                    issue(3, 25, "rule 1 'm'", "give either path or path_regex, not both"))
        assertIssue(rule(match: "{ host: \"*\", path_regex: b, path: /a }"),
                    issue(3, 40, "rule 1 'm'", "give either path or path_regex, not both"))
    }

    /// A regular expression that does not compile is refused with the reason in words, at the culprit.
    func testBadPathRegex() {
        assertIssue(rule(match: "{ host: \"*\", path_regex: \"(\" }"), issue(3, 38, "rule 1 'm'",
            "path_regex '(': missing ) to close the group opened here"))
    }

    /// A path on several lines is refused (paths are one line).
    func testPathOnOneLine() {
        assertIssue(rule(match: "{ host: \"*\", path: \"/a\\nb\" }"),
                    issue(3, 31, "rule 1 'm'", "path must be one line without control characters"))
    }

    // MARK: - dns rules

    /// A dns rule matches on host and port only; each other condition is named.
    func testDNSRuleRefusesOtherConditions() {
        assertIssues(rule(match: "{ host: a.com, port: 443, path: /x, method: GET, scheme: https }",
                          action: "dns: { to: 127.0.0.1 }"), [
            issue(3, 38, "rule 1 'm'", "a dns rule matches on host and port only (it decides where connections go): remove 'path'"),
            issue(3, 48, "rule 1 'm'", "a dns rule matches on host and port only (it decides where connections go): remove 'method'"),
            issue(3, 61, "rule 1 'm'", "a dns rule matches on host and port only (it decides where connections go): remove 'scheme'"),
        ])
    }

    // MARK: - ssl_proxying

    /// ssl_proxying is a mapping of include and exclude (or nothing: the defaults, like an empty
    /// `rules:`); its issues carry no rule.
    func testSSLProxyingShape() throws {
        XCTAssertTrue(try RulesTestSupport.parse("ssl_proxying:\n").sslProxying.isDefault)
        assertIssue("ssl_proxying: [a.com]\n",
                    issue(1, 15, nil, "ssl_proxying must be a mapping (key: value lines), not a list"))
        assertIssue("ssl_proxying:\n  includes: a.com\n",
                    issue(2, 3, nil, "unknown key 'includes' in ssl_proxying (did you mean 'include'?)"))
    }

    /// Host patterns in the lists are checked like rule hosts, named by their list.
    func testSSLProxyingPatterns() {
        assertIssues("""
            ssl_proxying:
              include: []
              exclude: ["a.com", "*.b.com:443"]
            """, [
                issue(2, 12, nil, "ssl_proxying include is an empty list: give at least one value or remove the key"),
                issue(3, 22, nil,
                      "host pattern '*.b.com:443' has a port: host patterns take no port; write '*.b.com' and put the port in the rule's 'port:' key"),
            ])
    }

    /// Issues after the rule list are not labelled with the last rule.
    func testSSLProxyingAfterRulesHasNoRuleLabel() {
        assertIssue(rule(match: "{ host: \"*\" }") + "ssl_proxying:\n  exclude: { a: b }\n",
                    issue(6, 12, nil, "ssl_proxying exclude must be a value or a list of values, not a mapping"))
    }
}
