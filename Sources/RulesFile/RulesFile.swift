import Foundation
import LinearRegex
import Rules
import Yams

/// Reads a rules file (YAML) into a `RuleSet`, or explains every problem with its line.
///
/// ```yaml
/// rules:
///   - name: Block ads
///     match: { host: "*.doubleclick.net" }
///     block: {}
/// ssl_proxying:
///   exclude: ["*.apple.com"]
/// ```
/// README documents every key. Relative paths (map-local files) start at the rules file's
/// folder; `~` is the home directory.
public enum RulesFile {
    /// Files larger than this are refused (a rules file is hand-written).
    public static let maximumBytes = 4 << 20
    /// More rules than this are refused (YAML aliases can multiply a list).
    public static let maximumRules = 10_000

    /// Reads and parses the file at `path`.
    public static func load(path: String) throws(RulesFileError) -> RuleSet {
        try parse(data: read(path: path), file: path)
    }

    /// The file's bytes, or an error naming why they cannot be had.
    public static func read(path: String) throws(RulesFileError) -> Data {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > maximumBytes {
                throw RulesFileError(file: path, issues: [RulesFileIssue(
                    line: 0, column: 0, rule: nil,
                    message: "the file is \(size) bytes; a rules file may hold at most \(maximumBytes >> 20) MiB (\(maximumBytes) bytes)")])
            }
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as RulesFileError {
            throw error
        } catch {
            throw RulesFileError(file: path, issues: [RulesFileIssue(
                line: 0, column: 0, rule: nil, message: "cannot read the file: \(Self.reason(error))")])
        }
    }

    /// Parses the bytes of the file at `file` (relative paths start at its folder).
    public static func parse(data: Data, file: String) throws(RulesFileError) -> RuleSet {
        guard let text = String(data: data, encoding: .utf8) else {
            throw RulesFileError(file: file, issues: [RulesFileIssue(
                line: 0, column: 0, rule: nil, message: "the file is not UTF-8 text: save it as UTF-8")])
        }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        return try parse(text, file: file, baseDirectory: folder)
    }

    /// Parses `text`; `file` names it in messages and becomes the set's `source`.
    public static func parse(_ text: String, file: String, baseDirectory: String) throws(RulesFileError) -> RuleSet {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw RulesFileError(file: file, issues: [Self.issue(for: error)])
        }
        var parser = RulesFileParser(baseDirectory: baseDirectory)
        let rules = root.flatMap { parser.document($0) }
        if !parser.nodes.issues.isEmpty {
            throw RulesFileError(file: file, issues: inFileOrder(parser.nodes.issues))
        }
        return RuleSet(rules: rules?.rules ?? [], sslProxying: rules?.ssl ?? SSLProxyingLists(), source: file)
    }

    /// Issues by their place in the file: the walk finds some after what follows them (a
    /// duplicate name, a rule's missing parts, an action written before its match).
    static func inFileOrder(_ issues: [RulesFileIssue]) -> [RulesFileIssue] {
        issues.enumerated().sorted {
            ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
        }.map(\.element)
    }

    static func issue(for error: any Error) -> RulesFileIssue {
        guard let yaml = error as? YamlError else {
            return RulesFileIssue(line: 0, column: 0, rule: nil, message: "not valid YAML: \(error)")
        }
        switch yaml {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let while_ = context.map { " (\($0.text) at line \($0.mark.line))" } ?? ""
            return RulesFileIssue(line: mark.line, column: mark.column, rule: nil,
                                  message: "not valid YAML: \(problem)\(while_)")
        case .reader(let problem, let offset, _, let yaml):
            // The offset counts characters; the place is counted as libyaml counts the others.
            guard let offset, let end = yaml.index(yaml.startIndex, offsetBy: offset, limitedBy: yaml.endIndex) else {
                return RulesFileIssue(line: 0, column: 0, rule: nil, message: "not valid YAML: \(problem)")
            }
            var line = 1, column = 1
            for scalar in yaml[..<end].unicodeScalars {
                if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            }
            return RulesFileIssue(line: line, column: column, rule: nil, message: "not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return RulesFileIssue(line: context.mark.line, column: context.mark.column, rule: nil,
                                  message: "the key \(keys) is given twice in one mapping: keep one")
        default:
            return RulesFileIssue(line: 0, column: 0, rule: nil, message: "not valid YAML: \(yaml)")
        }
    }

    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSCocoaErrorDomain && nsError.code == NSFileReadNoSuchFileError {
            return "no such file"
        }
        return nsError.localizedDescription
    }
}

/// The walk over a composed rules file; issues collect in `nodes`.
struct RulesFileParser {
    let baseDirectory: String
    var nodes = YAMLNodes()
    /// What the file's regexes may compile to in all.
    var regexBudget = LinearRegexBudget()

    init(baseDirectory: String) {
        self.baseDirectory = baseDirectory
    }

    mutating func document(_ root: Node) -> (rules: [Rule], ssl: SSLProxyingLists)? {
        if YAMLNodes.isNull(root) { return ([], SSLProxyingLists()) }
        guard let entries = nodes.mapping(root, "the rules file", allowed: ["rules", "ssl_proxying"]) else { return nil }
        var rules: [Rule] = []
        var ssl = SSLProxyingLists()
        for entry in entries {
            switch entry.key {
            case "rules":
                rules = ruleList(entry.value)
            case "ssl_proxying":
                if !YAMLNodes.isNull(entry.value) {
                    ssl = sslProxying(entry.value) ?? ssl
                }
            default:
                break
            }
        }
        checkUniqueNames(rules)
        return (rules, ssl)
    }

    private mutating func ruleList(_ node: Node) -> [Rule] {
        if YAMLNodes.isNull(node) { return [] }
        guard case .sequence(let sequence) = node else {
            nodes.fail(node, "'rules' must be a list of rules (lines starting with '- '), not \(YAMLNodes.kindName(node))")
            return []
        }
        guard sequence.count <= RulesFile.maximumRules else {
            nodes.fail(node, "the file has \(sequence.count) rules; at most \(RulesFile.maximumRules) are allowed")
            return []
        }
        var rules: [Rule] = []
        for (offset, item) in sequence.enumerated() {
            if let rule = rule(item, number: offset + 1) {
                rules.append(rule)
            }
        }
        nodes.rule = nil
        return rules
    }

    private mutating func rule(_ node: Node, number: Int) -> Rule? {
        nodes.rule = "rule \(number)"
        if case .mapping(let mapping) = node, let nameNode = mapping["name"], let name = nameNode.scalar?.string {
            nodes.rule = "rule \(number) '\(name)'"
        }
        let actions = RuleKind.allCases.map(\.rawValue)
        guard let entries = nodes.mapping(node, "a rule", allowed: ["name", "enabled", "match"] + actions) else { return nil }
        var name: String?
        var enabled = true
        var matchNode: Node?
        var actionEntries: [(key: String, keyNode: Node, value: Node)] = []
        for entry in entries {
            switch entry.key {
            case "name":
                if let text = nodes.singleLine(entry.value, "name") {
                    if text.trimmingCharacters(in: .whitespaces).isEmpty || text.count > 200 {
                        nodes.fail(entry.value, "name must be 1 to 200 characters of text")
                    } else {
                        name = text
                    }
                }
            case "enabled":
                enabled = nodes.bool(entry.value, "enabled") ?? enabled
            case "match":
                matchNode = entry.value
            default:
                actionEntries.append(entry)
            }
        }
        guard let actionEntry = actionEntries.first else {
            nodes.missing(node, "the rule has no action: add one of \(actions.joined(separator: ", "))")
            return nil
        }
        if actionEntries.count > 1 {
            nodes.fail(actionEntries[1].keyNode,
                       "the rule has two actions (\(actionEntries[0].key) and \(actionEntries[1].key)): split it into two rules")
            return nil
        }
        guard let matchNode else {
            nodes.missing(node, "the rule has no 'match:'; write match: { host: \"*\" } to match every request")
            return nil
        }
        let kind = RuleKind(rawValue: actionEntry.key)!
        let match = self.match(matchNode, for: kind)
        let action = self.action(kind, actionEntry.value, checkFiles: enabled)
        guard let match, let action else { return nil }
        return Rule(name: name ?? "\(kind.rawValue) #\(number)", enabled: enabled, match: match, action: action,
                    line: node.mark?.line ?? 0)
    }

    private mutating func checkUniqueNames(_ rules: [Rule]) {
        var firstLine: [String: Int] = [:]
        for (offset, rule) in rules.enumerated() {
            if let line = firstLine[rule.name] {
                nodes.rule = "rule \(offset + 1) '\(rule.name)'"
                nodes.fail(line: rule.line,
                           "the name '\(rule.name)' is also used by the rule at line \(line): names must be unique (flows record them)")
                nodes.rule = nil
            } else {
                firstLine[rule.name] = rule.line
            }
        }
    }
}
