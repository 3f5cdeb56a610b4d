import Foundation
import ProxyModel
import LinearRegex
import ProxyCore
import Rules
import Yams

/// `match:` and `ssl_proxying:`: host patterns, port, scheme, method, path.
extension RulesFileParser {
    mutating func match(_ node: Node, for kind: RuleKind) -> RuleMatch? {
        guard let entries = nodes.mapping(
            node, "match", allowed: ["host", "port", "scheme", "method", "path", "path_regex"]) else { return nil }
        var hosts: HostPatternList?
        var port: Int?
        var schemes: Set<String>?
        var methods: Set<String>?
        var path: PathCondition?
        var valid = true
        for entry in entries {
            if kind == .dns && !["host", "port"].contains(entry.key) {
                nodes.fail(entry.keyNode,
                           "a dns rule matches on host and port only (it decides where connections go): remove '\(entry.key)'")
                valid = false
                continue
            }
            switch entry.key {
            case "host":
                hosts = hostList(entry.value, "host")
                valid = valid && hosts != nil
            case "port":
                port = nodes.integer(entry.value, "port", in: 1...65535)
                valid = valid && port != nil
            case "scheme":
                schemes = words(entry.value, "scheme", lowercased: true) { scheme in
                    ["http", "https"].contains(scheme) ? nil : "scheme must be http or https, not '\(scheme)'"
                }
                valid = valid && schemes != nil
            case "method":
                methods = words(entry.value, "method", lowercased: false) { method in
                    HTTPGrammar.isToken(method)
                        ? nil : "'\(method)' is not an HTTP method (letters, e.g. GET or POST)"
                }.map { Set($0.map { $0.uppercased() }) }
                valid = valid && methods != nil
            case "path":
                guard let text = nodes.singleLine(entry.value, "path") else { valid = false; continue }
                guard text.hasPrefix("/") || text.hasPrefix("*") else {
                    nodes.fail(entry.value, "path '\(text)' must start with / (or *): it is matched against the URL's path, e.g. /api/*")
                    valid = false
                    continue
                }
                if entries.contains(where: { $0.key == "path_regex" }) {
                    nodes.fail(entry.keyNode, "give either path or path_regex, not both")
                    valid = false
                    continue
                }
                path = .glob(PathGlob(text))
            case "path_regex":
                guard let regex = regex(entry.value, "path_regex") else { valid = false; continue }
                path = .regex(regex)
            default:
                break
            }
        }
        guard valid else { return nil }
        guard let hosts else {
            nodes.missing(node, "match needs a host: write host: \"*\" to match every host")
            return nil
        }
        return RuleMatch(hosts: hosts, port: port, schemes: schemes, methods: methods, path: path)
    }

    mutating func hostList(_ node: Node, _ what: String) -> HostPatternList? {
        guard let items = nodes.oneOrMany(node, what) else { return nil }
        var patterns: [HostPattern] = []
        var valid = true
        for item in items {
            guard let text = nodes.string(item, what) else { valid = false; continue }
            do {
                patterns.append(try HostPattern(text))
            } catch {
                nodes.fail(item, error.message)
                valid = false
            }
        }
        return valid ? HostPatternList(patterns) : nil
    }

    /// A word or a list of words, each checked by `problem` (nil: fine).
    private mutating func words(_ node: Node, _ what: String, lowercased: Bool,
                                _ problem: (String) -> String?) -> Set<String>? {
        guard let items = nodes.oneOrMany(node, what) else { return nil }
        var words = Set<String>()
        var valid = true
        for item in items {
            guard var text = nodes.string(item, what) else { valid = false; continue }
            if lowercased { text = text.lowercased() }
            if let problem = problem(text) {
                nodes.fail(item, problem)
                valid = false
            } else {
                words.insert(text)
            }
        }
        return valid ? words : nil
    }

    mutating func sslProxying(_ node: Node) -> SSLProxyingLists? {
        nodes.rule = nil
        guard let entries = nodes.mapping(node, "ssl_proxying", allowed: ["include", "exclude"]) else { return nil }
        var lists = SSLProxyingLists()
        var valid = true
        for entry in entries {
            guard let list = hostList(entry.value, "ssl_proxying \(entry.key)") else { valid = false; continue }
            if entry.key == "include" {
                lists.include = list
            } else {
                lists.exclude = list
            }
        }
        return valid ? lists : nil
    }

    /// A regex (RE2 syntax, case-sensitive); one that RE2 cannot run is an issue at the construct
    /// at fault, naming it in words.
    mutating func regex(_ node: Node, _ what: String) -> LinearRegex? {
        guard let text = nodes.string(node, what) else { return nil }
        do throws(LinearRegexError) {
            return try regexBudget.compile(text)
        } catch {
            nodes.fail(node, "\(what) '\(LinearRegexError.excerpt(text))': \(error.reason)", atScalarOffset: error.scalarOffset)
            return nil
        }
    }
}
