/// Why a rules file cannot be used: every problem found, each with its place in the file.
///
/// `description` is what the CLI prints and the log records: one line per problem,
/// `FILE:LINE:COLUMN: rule N 'NAME': what is wrong and what to write instead`.
public struct RulesFileError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let issues: [RulesFileIssue]

    public init(file: String, issues: [RulesFileIssue]) {
        self.file = file
        self.issues = issues
    }

    public var description: String {
        issues.map { $0.description(file: file) }.joined(separator: "\n")
    }
}

/// One problem in a rules file.
public struct RulesFileIssue: Sendable, Equatable {
    /// 1-based; 0 when the problem is the file as a whole (unreadable, too large).
    public let line: Int
    public let column: Int
    /// `rule 3 'Block ads'` (or `rule 3` without a name) when the problem is inside a rule.
    public let rule: String?
    public let message: String

    public init(line: Int, column: Int, rule: String?, message: String) {
        self.line = line
        self.column = column
        self.rule = rule
        self.message = message
    }

    public func description(file: String) -> String {
        var text = line > 0 ? "\(file):\(line):\(column): " : "\(file): "
        if let rule { text += "\(rule): " }
        return text + message
    }
}
