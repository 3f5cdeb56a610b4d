import Foundation
@testable import Rules
@testable import RulesFile
import RulesTestSupport
import XCTest

/// The shape of a rules file: YAML syntax, the top level, the rule list and each rule's own
/// keys (name, enabled, match, one action), with the exact issue each mistake gives.
final class RulesFileStructureTests: XCTestCase {
    // MARK: - Empty files

    /// An empty file, a file of comments and `rules:` with nothing under it are valid and hold no rules.
    func testEmptyFilesHoldNoRules() throws {
        for text in ["", "# nothing yet\n", "rules:\n", "rules: []\n", "rules: ~\n"] {
            let rules = try RulesTestSupport.parse(text)
            XCTAssertEqual(rules.rules.count, 0, text)
            XCTAssertEqual(rules.isInert, true, text)
            XCTAssertEqual(rules.source, "rules.yaml", text)
        }
    }

    // MARK: - YAML syntax

    /// A scanner error gives libyaml's problem at its line and column, outside any rule.
    func testYAMLScannerErrorHasItsPlace() {
        assertIssue("rules:\n  - name: a: b\n",
                    issue(2, 12, nil, "not valid YAML: mapping values are not allowed in this context"))
    }

    /// A parser error names what was being read and the line where that started.
    func testYAMLParserErrorNamesItsContext() {
        assertIssue("rules: [a, b\n",
                    issue(2, 1, nil, "not valid YAML: did not find expected ',' or ']' (while parsing a flow sequence at line 1)"))
    }

    /// An alias to an anchor that does not exist is a composer error, at the alias.
    func testUndefinedAlias() {
        assertIssue("rules: *missing\n", issue(1, 8, nil, "not valid YAML: found undefined alias"))
    }

    /// A key repeated in one mapping is refused by the YAML layer, at the key's first occurrence.
    func testDuplicateKeyInAMapping() {
        assertIssue("""
            rules:
              - name: a
                name: b
                match: { host: "*" }
                block: {}
            """, issue(2, 5, nil, "the key 'name' is given twice in one mapping: keep one"))
    }

    /// Keys that are one key to the rules file but two to YAML (a tag) are caught by the parser.
    func testDuplicateKeyThatYAMLDoesNotSee() {
        assertIssue("""
            rules:
              - name: a
                match:
                  host: a.com
                  !k host: b.com
                block: {}
            """, issue(5, 7, "rule 1 'a'", "'host' is given twice in match: keep one"))
    }

    // MARK: - Top level

    /// The file must be a mapping.
    func testTopLevelMustBeAMapping() {
        assertIssue("- a\n- b\n",
                    issue(1, 1, nil, "the rules file must be a mapping (key: value lines), not a list"))
        assertIssue("hello\n", issue(1, 1, nil, "the rules file must be a mapping (key: value lines), not 'hello'"))
    }

    /// An unknown top-level key close to a known one is suggested.
    func testUnknownTopLevelKeySuggestsTheNearestOne() {
        assertIssue("rule:\n", issue(1, 1, nil, "unknown key 'rule' in the rules file (did you mean 'rules'?)"))
    }

    /// An unknown key far from every known one lists them all.
    func testUnknownTopLevelKeyListsTheKnownOnes() {
        assertIssue("version: 2\n",
                    issue(1, 1, nil, "unknown key 'version' in the rules file (expected one of: rules, ssl_proxying)"))
    }

    /// `rules:` must be a list.
    func testRulesMustBeAList() {
        assertIssue("rules: yes\n",
                    issue(1, 8, nil, "'rules' must be a list of rules (lines starting with '- '), not 'yes'"))
        assertIssue("rules:\n  name: a\n",
                    issue(2, 3, nil, "'rules' must be a list of rules (lines starting with '- '), not a mapping"))
    }

    /// More than `maximumRules` entries are refused as a whole, at the list.
    func testTooManyRules() {
        let text = "rules:\n" + String(repeating: "  - x\n", count: RulesFile.maximumRules + 1)
        assertIssue(text, issue(2, 3, nil, "the file has 10001 rules; at most 10000 are allowed"))
    }

    // MARK: - A rule's own keys

    /// A list entry that is not a mapping is refused, labelled with its position.
    func testRuleMustBeAMapping() {
        assertIssue("rules:\n  - block\n",
                    issue(2, 5, "rule 1", "a rule must be a mapping (key: value lines), not 'block'"))
    }

    /// An unknown rule key is suggested case-insensitively, or the known keys are listed.
    func testUnknownRuleKeys() {
        assertIssues("""
            rules:
              - Name: a
                match: { host: "*" }
                block: {}
              - name: b
                colour: red
                match: { host: "*" }
                block: {}
            """, [
                issue(2, 5, "rule 1", "unknown key 'Name' in a rule (did you mean 'name'?)"),
                issue(6, 5, "rule 2 'b'",
                      "unknown key 'colour' in a rule (expected one of: name, enabled, match, block, map_local, map_remote, dns, rewrite, upstream_proxy, throttle)"),
            ])
    }

    /// A mapping key that is itself a list is not text.
    func testKeyThatIsNotText() {
        assertIssue("""
            rules:
              - name: a
                match: { host: "*" }
                block: {}
                [x]: 1
            """, issue(5, 5, "rule 1 'a'", "a rule has a key that is not text"))
    }

    /// A rule without an action says which actions exist.
    func testRuleWithoutAction() {
        assertIssue("""
            rules:
              - name: a
                match: { host: "*" }
            """, issue(2, 5, "rule 1 'a'", "the rule has no action: add one of block, map_local, map_remote, dns, rewrite, upstream_proxy, throttle"))
    }

    /// A rule with two actions is refused at the second one.
    func testRuleWithTwoActions() {
        assertIssue("""
            rules:
              - name: a
                match: { host: "*" }
                block: {}
                dns: { to: 127.0.0.1 }
            """, issue(5, 5, "rule 1 'a'", "the rule has two actions (block and dns): split it into two rules"))
    }

    /// A rule without `match:` shows how to match everything.
    func testRuleWithoutMatch() {
        assertIssue("""
            rules:
              - name: a
                block: {}
            """, issue(2, 5, "rule 1 'a'", "the rule has no 'match:'; write match: { host: \"*\" } to match every request"))
    }

    /// `match:` must be a mapping.
    func testMatchMustBeAMapping() {
        assertIssue("""
            rules:
              - match: [a.com]
                block: {}
            """, issue(2, 12, "rule 1", "match must be a mapping (key: value lines), not a list"))
    }

    /// `enabled:` takes a boolean.
    func testEnabledMustBeABoolean() {
        assertIssue("""
            rules:
              - name: a
                enabled: maybe
                match: { host: "*" }
                block: {}
            """, issue(3, 14, "rule 1 'a'", "enabled must be true or false, not 'maybe'"))
    }

    /// Names must be text of 1 to 200 characters on one line.
    func testNameProblems() {
        let long = String(repeating: "n", count: 201)
        assertIssues("""
            rules:
              - name: [a]
                match: { host: "*" }
                block: {}
              - name: "  "
                match: { host: "*" }
                block: {}
              - name: \(long)
                match: { host: "*" }
                block: {}
              - name: "two\\nlines"
                match: { host: "*" }
                block: {}
            """, [
                issue(2, 11, "rule 1", "name must be text, not a list"),
                issue(5, 11, "rule 2 '  '", "name must be 1 to 200 characters of text"),
                issue(8, 11, "rule 3 '\(long)'", "name must be 1 to 200 characters of text"),
                issue(11, 11, "rule 4 'two\nlines'", "name must be one line without control characters"),
            ])
    }

    /// Two rules may not share a name, written or defaulted; the second is reported.
    func testDuplicateNames() {
        assertIssues("""
            rules:
              - name: same
                match: { host: "*" }
                block: {}
              - name: same
                match: { host: "*" }
                rewrite: { status: 200 }
              - name: "block #4"
                match: { host: "*" }
                block: {}
              - match: { host: "*" }
                block: {}
            """, [
                issue(5, 1, "rule 2 'same'", "the name 'same' is also used by the rule at line 2: names must be unique (flows record them)"),
                issue(11, 1, "rule 4 'block #4'",
                      "the name 'block #4' is also used by the rule at line 8: names must be unique (flows record them)"),
            ])
    }

    // MARK: - Every issue, in file order

    /// Problems in several rules and in ssl_proxying are all reported, in the order of the file.
    func testEveryIssueIsReportedInFileOrder() {
        assertIssues("""
            rules:
              - name: one
                match: { host: "*", port: 0 }
                block: {}
              - name: two
                match: { host: "*" }
                block: {}
              - name: two
                match: { host: "a b" }
                block: {}
            ssl_proxying:
              exclude: ["*.", ""]
            """, [
                issue(3, 31, "rule 1 'one'", "port must be a number from 1 to 65535, not '0'"),
                issue(9, 20, "rule 3 'two'",
                      "host pattern 'a b' contains a space: remove it (one host per pattern, no spaces)"),
                issue(12, 19, nil,
                      "host pattern is empty: write a host such as 'example.com' or '*.example.com', or '*' for every host"),
            ])
    }

    /// A duplicate name comes in file order among the other issues.
    func testDuplicateNameIssueComesInFileOrder() {
        assertIssues("""
            rules:
              - name: same
                match: { host: "*" }
                block: {}
              - name: same
                match: { host: "*" }
                block: {}
              - name: other
                match: { host: "*" }
                block: { status: 100 }
            """, [
                issue(5, 1, "rule 2 'same'", "the name 'same' is also used by the rule at line 2: names must be unique (flows record them)"),
                issue(10, 22, "rule 3 'other'", "block status must be a number from 200 to 599, not '100'"),
            ])
    }

    /// Within one rule, issues come in file order even when the action is written before the match.
    func testIssuesInsideOneRuleComeInFileOrder() {
        assertIssues("""
            rules:
              - name: a
                block: { status: 1 }
                match: { host: "*", port: 0 }
            """, [
                issue(3, 22, "rule 1 'a'", "block status must be a number from 200 to 599, not '1'"),
                issue(4, 31, "rule 1 'a'", "port must be a number from 1 to 65535, not '0'"),
            ])
    }

    // MARK: - Description

    /// The error prints one `FILE:LINE:COLUMN: rule: message` line per issue; whole-file issues have no place.
    func testErrorDescription() {
        let error = RulesFileError(file: "/etc/rules.yaml", issues: [
            issue(3, 14, "rule 1 'a'", "enabled must be true or false, not 'maybe'"),
            issue(1, 1, nil, "unknown key 'rule' in the rules file (did you mean 'rules'?)"),
            issue(0, 0, nil, "the file is not UTF-8 text: save it as UTF-8"),
        ])
        XCTAssertEqual(error.description, """
            /etc/rules.yaml:3:14: rule 1 'a': enabled must be true or false, not 'maybe'
            /etc/rules.yaml:1:1: unknown key 'rule' in the rules file (did you mean 'rules'?)
            /etc/rules.yaml: the file is not UTF-8 text: save it as UTF-8
            """)
    }
}
