import Foundation
import ProxyModel
import LinearRegex
import Rules
import Yams

/// Header lists and edits, and body text replacements.
extension RulesFileParser {
    /// Headers the proxy frames messages and manages connections with; rules may not set or
    /// remove them (a rewritten Content-Length would desynchronize the two connections).
    static let framingHeaders: Set<String> = [
        "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
    ]

    /// `{Name: value, Other: [v1, v2]}` as (name, value) pairs in order.
    mutating func headerValues(_ node: Node, _ what: String) -> [(name: String, value: String)]? {
        guard case .mapping(let mapping) = node else {
            nodes.fail(node, "\(what) must be a mapping of header names to values, e.g. { X-Debug: \"1\" }")
            return nil
        }
        var headers: [(name: String, value: String)] = []
        var valid = true
        for (keyNode, valueNode) in mapping {
            guard let name = headerName(keyNode, what) else { valid = false; continue }
            let values: [Node]
            if case .sequence(let sequence) = valueNode { values = Array(sequence) } else { values = [valueNode] }
            for value in values {
                guard let text = nodes.singleLine(value, "the value of \(name)") else { valid = false; continue }
                headers.append((name, text))
            }
        }
        return valid ? headers : nil
    }

    private mutating func headerName(_ node: Node, _ what: String) -> String? {
        guard let name = nodes.string(node, "a header name in \(what)") else { return nil }
        guard HTTPGrammar.isToken(name) else {
            nodes.fail(node, "'\(name)' is not a header name (letters, digits and -, no spaces or colons)")
            return nil
        }
        guard !Self.framingHeaders.contains(name.lowercased()) else {
            nodes.fail(node, "\(name) cannot be set by rules: the proxy manages the framing and connection headers (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade)")
            return nil
        }
        return name
    }

    mutating func headerEdits(_ node: Node, _ what: String) -> HeaderEdits? {
        guard let entries = nodes.mapping(node, what, allowed: ["set", "add", "remove"]) else { return nil }
        var edits = HeaderEdits()
        var valid = true
        for entry in entries {
            switch entry.key {
            case "set":
                if let headers = headerValues(entry.value, "\(what) set") { edits.set = headers } else { valid = false }
            case "add":
                if let headers = headerValues(entry.value, "\(what) add") { edits.add = headers } else { valid = false }
            case "remove":
                guard let items = nodes.oneOrMany(entry.value, "\(what) remove") else { valid = false; continue }
                for item in items {
                    if let name = headerName(item, "\(what) remove") { edits.remove.append(name) } else { valid = false }
                }
            default:
                break
            }
        }
        return valid ? edits : nil
    }

    mutating func replacements(_ node: Node, _ what: String) -> [TextReplacement]? {
        // One replacement may be written without the list around it.
        let items: [Node]
        if case .mapping = node {
            items = [node]
        } else {
            guard let many = nodes.oneOrMany(node, what) else { return nil }
            items = many
        }
        var list: [TextReplacement] = []
        var valid = true
        for item in items {
            guard let entries = nodes.mapping(item, "a \(what) replacement", allowed: ["find", "regex", "replace"]) else {
                valid = false
                continue
            }
            var pattern: TextReplacement.Pattern?
            var replacement: String?
            var replacementNode: Node?
            for entry in entries {
                switch entry.key {
                case "find":
                    guard let text = nodes.string(entry.value, "find") else { valid = false; continue }
                    guard !text.isEmpty else {
                        nodes.fail(entry.value, "find must be non-empty text")
                        valid = false
                        continue
                    }
                    pattern = .literal(text)
                case "regex":
                    guard let regex = regex(entry.value, "regex") else { valid = false; continue }
                    pattern = .regex(regex)
                case "replace":
                    replacement = YAMLNodes.isNull(entry.value) ? "" : nodes.string(entry.value, "replace")
                    replacementNode = entry.value
                default:
                    break
                }
            }
            let keys = Set(entries.map(\.key))
            if keys.contains("find") && keys.contains("regex") {
                nodes.fail(item, "give either find (literal text) or regex, not both")
                valid = false
            } else if !keys.contains("find") && !keys.contains("regex") {
                nodes.missing(item, "a \(what) replacement needs find: (literal text) or regex:, and replace:")
                valid = false
            } else if !keys.contains("replace") {
                nodes.missing(item, "a \(what) replacement needs replace: (the new text; \"\" to delete)")
                valid = false
            }
            if let pattern, let replacement, let replacementNode {
                do throws(LinearRegexError) {
                    list.append(try TextReplacement(pattern: pattern, replacement: replacement))
                } catch {
                    nodes.fail(replacementNode, "replace '\(LinearRegexError.excerpt(replacement))': \(error.reason)",
                               atScalarOffset: error.scalarOffset)
                    valid = false
                }
            }
        }
        return valid ? list : nil
    }
}
