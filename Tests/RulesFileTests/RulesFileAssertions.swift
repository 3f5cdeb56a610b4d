import RulesFile
import RulesTestSupport
import XCTest

/// The issues `yaml` is refused with; empty (after a recorded failure) when it parses.
func refusedIssues(_ yaml: String, base: String = RulesTestSupport.defaultBase,
                   file: StaticString = #filePath, line: UInt = #line) -> [RulesFileIssue] {
    do {
        let rules = try RulesTestSupport.parse(yaml, base: base)
        XCTFail("parsed into \(rules.rules.count) rules; expected issues", file: file, line: line)
        return []
    } catch {
        return error.issues
    }
}

/// An issue as the tests write them: `issue(4, 15, "rule 1 'r'", "message")`.
func issue(_ line: Int, _ column: Int, _ rule: String?, _ message: String) -> RulesFileIssue {
    RulesFileIssue(line: line, column: column, rule: rule, message: message)
}

/// Asserts that `yaml` is refused with exactly `expected`, in that order.
func assertIssues(_ yaml: String, _ expected: [RulesFileIssue], base: String = RulesTestSupport.defaultBase,
                  file: StaticString = #filePath, line: UInt = #line) {
    let found = refusedIssues(yaml, base: base, file: file, line: line)
    XCTAssertEqual(found, expected, file: file, line: line)
}

/// Asserts that `yaml` is refused with exactly one issue.
func assertIssue(_ yaml: String, _ expected: RulesFileIssue, base: String = RulesTestSupport.defaultBase,
                 file: StaticString = #filePath, line: UInt = #line) {
    assertIssues(yaml, [expected], base: base, file: file, line: line)
}
