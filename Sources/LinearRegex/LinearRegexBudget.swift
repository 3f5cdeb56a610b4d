/// What the regexes of one rules file, or of one filter, may compile to in all.
///
/// Each pattern is bounded on its own (`LinearRegex.memoryLimit`), but compiling costs about a
/// microsecond per instruction of the program and the program stays in memory: 10,000 rules of
/// `\pL{100}` (120,000 instructions each) would take minutes and gigabytes to load. Past the
/// budget a pattern is refused without being compiled, so loading stays bounded too.
public struct LinearRegexBudget: Sendable {
    /// Instructions (RE2's `ProgramSize`) for everything compiled through one budget.
    public static let defaultLimit = 1_000_000

    public let limit: Int
    /// Instructions compiled so far.
    public private(set) var used = 0

    public init(limit: Int = Self.defaultLimit) {
        self.limit = limit
    }

    /// Compiles `pattern` and charges its program to the budget.
    /// - Throws: `LinearRegexError` for a pattern RE2 refuses, or once the budget is spent.
    public mutating func compile(_ pattern: String, options: LinearRegex.Options = []) throws(LinearRegexError) -> LinearRegex {
        guard used <= limit else { throw spent(pattern) }
        let regex = try LinearRegex(pattern, options: options)
        used += regex.programSize
        guard used <= limit else { throw spent(pattern) }
        return regex
    }

    private func spent(_ pattern: String) -> LinearRegexError {
        LinearRegexError(pattern: pattern, position: nil,
                         reason: "with the regexes before it, this one passes the \(limit) instructions the regexes of one "
                             + "rules file or filter may compile to: use fewer or smaller patterns (\\pL, (?i) classes and {n} counts are large)")
    }
}
