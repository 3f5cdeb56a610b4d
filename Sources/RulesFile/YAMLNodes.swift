import Rules
import Yams

/// Typed reads of a composed YAML tree for the rules file parser: each read either returns the
/// value or records an issue at the node's line and column (and returns nil), so one pass
/// reports every problem in the file.
struct YAMLNodes {
    private(set) var issues: [RulesFileIssue] = []
    /// The rule being read (`rule 3 'name'`), added to every issue.
    var rule: String?
    /// Mappings (by position) that had a key not allowed there: a key they lack may just be
    /// misspelt, so `missing` says nothing more about them.
    private var mappingsWithUnknownKeys = Set<Int>()

    private static func position(_ node: Node) -> Int {
        (node.mark?.line ?? 0) * 100_000 + (node.mark?.column ?? 0)
    }

    /// A required key is absent from the mapping `node`; reported unless an unknown key there
    /// was already (`hots:` for `host:` is one mistake, not two).
    mutating func missing(_ node: Node, _ message: String) {
        guard !mappingsWithUnknownKeys.contains(Self.position(node)) else { return }
        fail(node, message)
    }

    mutating func fail(_ node: Node?, _ message: String) {
        let mark = node?.mark
        issues.append(RulesFileIssue(line: mark?.line ?? 0, column: mark?.column ?? 0, rule: rule, message: message))
    }

    /// An issue at the character `offset` Unicode scalars into the scalar `node`'s text, when the
    /// source spells that text one to one (a plain scalar, or a quoted one without escapes before
    /// the offset); at the node itself otherwise.
    mutating func fail(_ node: Node, _ message: String, atScalarOffset offset: Int?) {
        guard let mark = node.mark, let offset, case .scalar(let scalar) = node else { return fail(node, message) }
        let before = scalar.string.unicodeScalars.prefix(offset)
        guard !before.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return fail(node, message) }
        let column: Int?
        switch scalar.style {
        case .plain: column = mark.column + offset
        case .singleQuoted: column = mark.column + 1 + offset + before.filter { $0 == "'" }.count
        case .doubleQuoted: column = before.contains { $0 == "\\" || $0 == "\"" } ? nil : mark.column + 1 + offset
        default: column = nil
        }
        issues.append(RulesFileIssue(line: mark.line, column: column ?? mark.column, rule: rule, message: message))
    }

    mutating func fail(line: Int, _ message: String) {
        issues.append(RulesFileIssue(line: line, column: 1, rule: rule, message: message))
    }

    /// A mapping's entries by key, in order; unknown and repeated keys are issues. `what` names
    /// the mapping in messages (`match`, `map_local`).
    mutating func mapping(_ node: Node, _ what: String, allowed: [String]) -> [(key: String, keyNode: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            fail(node, "\(what) must be a mapping (key: value lines), not \(Self.kindName(node))")
            return nil
        }
        var entries: [(key: String, keyNode: Node, value: Node)] = []
        var seen = Set<String>()
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                fail(keyNode, "\(what) has a key that is not text")
                continue
            }
            guard allowed.contains(key) else {
                mappingsWithUnknownKeys.insert(Self.position(node))
                var message = "unknown key '\(key)' in \(what)"
                if let close = Self.closest(to: key, in: allowed) {
                    message += " (did you mean '\(close)'?)"
                } else {
                    message += " (expected one of: \(allowed.joined(separator: ", ")))"
                }
                fail(keyNode, message)
                continue
            }
            guard seen.insert(key).inserted else {
                fail(keyNode, "'\(key)' is given twice in \(what): keep one")
                continue
            }
            entries.append((key, keyNode, value))
        }
        return entries
    }

    mutating func string(_ node: Node, _ what: String) -> String? {
        guard case .scalar(let scalar) = node, !Self.isNull(node) else {
            fail(node, "\(what) must be text, not \(Self.kindName(node))")
            return nil
        }
        return scalar.string
    }

    /// Text on one line (header values, names): no CR, LF or other control characters.
    mutating func singleLine(_ node: Node, _ what: String) -> String? {
        guard let text = string(node, what) else { return nil }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) {
            fail(node, "\(what) must be one line without control characters")
            return nil
        }
        return text
    }

    mutating func integer(_ node: Node, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let scalar) = node, let value = Int(scalar.string), range.contains(value) else {
            fail(node, "\(what) must be a number from \(range.lowerBound) to \(range.upperBound), not \(Self.shown(node))")
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node, _ what: String) -> Bool? {
        guard let value = node.bool else {
            fail(node, "\(what) must be true or false, not \(Self.shown(node))")
            return nil
        }
        return value
    }

    /// One item or a list of them (`host: a.com` or `host: [a.com, b.com]`), at most `limit`.
    mutating func oneOrMany(_ node: Node, _ what: String, limit: Int = 1_000) -> [Node]? {
        switch node {
        case .sequence(let sequence):
            guard !sequence.isEmpty else {
                fail(node, "\(what) is an empty list: give at least one value or remove the key")
                return nil
            }
            guard sequence.count <= limit else {
                fail(node, "\(what) has \(sequence.count) entries; at most \(limit) are allowed")
                return nil
            }
            return Array(sequence)
        case .mapping:
            fail(node, "\(what) must be a value or a list of values, not a mapping")
            return nil
        default:
            return [node]
        }
    }

    static func isNull(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    static func kindName(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar: return isNull(node) ? "nothing" : "'\(node.scalar?.string ?? "")'"
        }
    }

    static func shown(_ node: Node) -> String {
        if case .scalar(let scalar) = node, !isNull(node) { return "'\(scalar.string)'" }
        return kindName(node)
    }

    /// The allowed key nearest to a misspelt one (edit distance 2 at most).
    static func closest(to key: String, in allowed: [String]) -> String? {
        let candidates = allowed.map { ($0, editDistance(key.lowercased(), $0)) }.filter { $0.1 <= 2 }
        return candidates.min { $0.1 < $1.1 }?.0
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
