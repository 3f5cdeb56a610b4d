import LinearRegex

/// A regex argument of a filter, compiled once: case-insensitive, searched anywhere in the
/// subject (like mitmproxy's `re.search`); `.` crosses newlines only in body regexes (mitmproxy
/// compiles those with DOTALL).
///
/// One type for every regex of the language, so the Swift evaluator and the capture store's
/// SQL function (which compiles patterns through the same initializer) cannot disagree. The
/// engine is RE2 (`LinearRegex`): a search costs time linear in the subject whatever the pattern,
/// so no filter can stall the TUI or a query; what RE2 cannot run is refused here, when the
/// filter is parsed. `LinearRegex` is immutable and thread-safe, so this is `Sendable`.
public struct FilterRegex: Sendable, CustomStringConvertible {
    /// The pattern as the user wrote it (quotes and escapes removed).
    public var pattern: String { regex.pattern }
    private let regex: LinearRegex

    /// Compiles `pattern`, case-insensitively; with `dotMatchesNewlines`, `.` matches `\n` too.
    /// An empty pattern matches anything (as in Python's `re`, mitmproxy's engine).
    /// - Throws: `LinearRegexError` naming what RE2 cannot run, or the syntax error, and where.
    public init(_ pattern: String, dotMatchesNewlines: Bool = false) throws(LinearRegexError) {
        var budget = LinearRegexBudget()
        try self.init(pattern, dotMatchesNewlines: dotMatchesNewlines, budget: &budget)
    }

    /// Compiles `pattern` through `budget` (a filter's regexes share one).
    init(_ pattern: String, dotMatchesNewlines: Bool, budget: inout LinearRegexBudget) throws(LinearRegexError) {
        regex = try budget.compile(pattern, options: dotMatchesNewlines ? [.caseInsensitive, .dotMatchesNewlines] : [.caseInsensitive])
    }

    /// True when the regex matches anywhere in `subject`.
    public func matches(_ subject: String) -> Bool {
        regex.matches(subject)
    }

    /// The pattern, quoted so the filter language reads it back unchanged.
    public var description: String {
        var quoted = "\""
        for character in pattern {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
