import Foundation
import ProxyCore
import Rules
import RulesFile

/// Rule fixtures shared by the Rules and RulesFile tests: rules written as YAML, requests from a
/// URL, host lists. Without XCTest: a fixture that cannot be built throws, and the test fails
/// with the error's text.
public enum RulesTestSupport {
    /// The folder relative map_local paths start at when a test does not give one.
    public static let defaultBase = "/nonexistent-rules-base"

    /// The rules in `yaml`; a refused file throws every issue.
    public static func parse(_ yaml: String, base: String = defaultBase) throws(RulesFileError) -> RuleSet {
        try RulesFile.parse(yaml, file: "rules.yaml", baseDirectory: base)
    }

    /// A request from `scheme://host[:port]/path?query`; the port defaults by scheme.
    public static func request(_ url: String, method: String = "GET") -> RequestFacts {
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
    public static func hosts(_ texts: String...) -> HostPatternList {
        try! HostPatternList(parsing: texts)
    }
}
