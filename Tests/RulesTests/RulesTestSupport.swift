import Foundation
import ProxyCore
import XCTest
@testable import Rules

/// Shared helpers of the Rules tests: parsing a YAML text, comparing its issues, building
/// requests and temporary folders.
enum RulesTestSupport {
    /// The folder relative map_local paths start at when a test does not give one.
    static let defaultBase = "/nonexistent-rules-base"

    /// The rules in `yaml`, or nil after recording a failure with every issue.
    static func parse(_ yaml: String, base: String = defaultBase,
                      file: StaticString = #filePath, line: UInt = #line) -> RuleSet? {
        do {
            return try RulesFile.parse(yaml, file: "rules.yaml", baseDirectory: base)
        } catch {
            XCTFail("the rules were refused:\n\(error.description)", file: file, line: line)
            return nil
        }
    }

    /// The issues `yaml` is refused with; empty (after a recorded failure) when it parses.
    static func issues(_ yaml: String, base: String = defaultBase,
                       file: StaticString = #filePath, line: UInt = #line) -> [RulesFileIssue] {
        do {
            let rules = try RulesFile.parse(yaml, file: "rules.yaml", baseDirectory: base)
            XCTFail("parsed into \(rules.rules.count) rules; expected issues", file: file, line: line)
            return []
        } catch {
            return error.issues
        }
    }

    /// A request from `scheme://host[:port]/path?query`; the port defaults by scheme.
    static func request(_ url: String, method: String = "GET") -> RequestFacts {
        let schemeEnd = url.range(of: "://")!
        let scheme = String(url[..<schemeEnd.lowerBound])
        var rest = url[schemeEnd.upperBound...]
        var pathAndQuery = "/"
        if let slash = rest.firstIndex(of: "/") {
            pathAndQuery = String(rest[slash...])
            rest = rest[..<slash]
        }
        var host = String(rest)
        var port = scheme == "https" ? 443 : 80
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            host = String(rest[..<colon])
            port = Int(rest[rest.index(after: colon)...])!
        }
        return RequestFacts(scheme: scheme, host: HostName.normalized(host), port: port, method: method,
                            pathAndQuery: pathAndQuery)
    }

    /// Host patterns that must parse.
    static func hosts(_ texts: String...) -> HostPatternList {
        try! HostPatternList(parsing: texts)
    }
}

/// An issue as the tests write them: `issue(4, 15, "rule 1 'r'", "message")`.
func issue(_ line: Int, _ column: Int, _ rule: String?, _ message: String) -> RulesFileIssue {
    RulesFileIssue(line: line, column: column, rule: rule, message: message)
}

/// Asserts that `yaml` is refused with exactly `expected`, in that order.
func assertIssues(_ yaml: String, _ expected: [RulesFileIssue], base: String = RulesTestSupport.defaultBase,
                  file: StaticString = #filePath, line: UInt = #line) {
    let found = RulesTestSupport.issues(yaml, base: base, file: file, line: line)
    XCTAssertEqual(found, expected, file: file, line: line)
}

/// Asserts that `yaml` is refused with exactly one issue.
func assertIssue(_ yaml: String, _ expected: RulesFileIssue, base: String = RulesTestSupport.defaultBase,
                 file: StaticString = #filePath, line: UInt = #line) {
    assertIssues(yaml, [expected], base: base, file: file, line: line)
}

/// A fresh folder under the system's temporary directory, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        let base = NSTemporaryDirectory() + "rules-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = URL(fileURLWithPath: base).standardizedFileURL.path
    }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let target = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: target))
        return target
    }

    func makeFolder(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
