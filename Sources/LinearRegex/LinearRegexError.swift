/// Why a pattern (or a replacement template) cannot be used, in words, and where.
///
/// Shown to people (a rules file issue, a filter's caret diagram), so `reason` is one line that
/// says what is wrong and, where there is one, what to write instead; never RE2's own text alone.
public struct LinearRegexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern (or template) as given.
    public let pattern: String
    /// Where in `pattern` the offending construct starts; nil when the whole pattern is at fault.
    public let position: String.Index?
    /// One line, e.g. "backreferences like \1 are not supported: ProxyApp's regexes run in
    /// linear time (RE2 syntax)".
    public let reason: String

    public init(pattern: String, position: String.Index?, reason: String) {
        self.pattern = pattern
        self.position = position
        self.reason = reason
    }

    /// `position` as a count of Characters from the start (what a caret diagram needs).
    public var characterOffset: Int? {
        position.map { pattern.distance(from: pattern.startIndex, to: $0) }
    }

    /// `position` as a count of Unicode scalars from the start (what YAML columns count).
    public var scalarOffset: Int? {
        position.map { pattern.unicodeScalars.distance(from: pattern.unicodeScalars.startIndex, to: $0) }
    }

    public var description: String { reason }

    /// The sentence every refusal of a backtracking-only construct ends with.
    static let linearTime = "ProxyApp's regexes run in linear time (RE2 syntax)"

    /// `text` for a one-line message: at most `limit` characters, control characters escaped.
    public static func excerpt(_ text: some StringProtocol, limit: Int = 60) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { return result + "…" }
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }
}
