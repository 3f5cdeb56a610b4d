import Foundation

/// A regex argument of a filter, compiled once: case-insensitive, searched anywhere in the
/// subject (like mitmproxy's `re.search`); `.` crosses newlines only in body regexes (mitmproxy
/// compiles those with DOTALL).
///
/// One type for every regex of the language, so the Swift evaluator and the capture store's
/// SQL function (which compiles patterns through the same initializer) cannot disagree.
/// `NSRegularExpression` is immutable, safe to use from several threads, and `Sendable`.
public struct FilterRegex: Sendable, CustomStringConvertible {
    /// The pattern as the user wrote it (quotes and escapes removed).
    public let pattern: String
    private let regex: NSRegularExpression

    /// Compiles `pattern`, case-insensitively; with `dotMatchesNewlines`, `.` matches `\n` too.
    /// - Throws: `FilterRegexError` when the pattern is not a valid regex.
    public init(_ pattern: String, dotMatchesNewlines: Bool = false) throws(FilterRegexError) {
        self.pattern = pattern
        let options: NSRegularExpression.Options =
            dotMatchesNewlines ? [.caseInsensitive, .dotMatchesLineSeparators] : [.caseInsensitive]
        do {
            // ICU refuses an empty pattern; Python's re (mitmproxy) takes it as "matches anything".
            regex = try NSRegularExpression(pattern: pattern.isEmpty ? "(?:)" : pattern, options: options)
        } catch {
            throw FilterRegexError(pattern: pattern)
        }
    }

    /// True when the regex matches anywhere in `subject`.
    public func matches(_ subject: String) -> Bool {
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
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

/// A pattern `NSRegularExpression` refused.
public struct FilterRegexError: Error, Sendable, Equatable {
    /// The refused pattern.
    public let pattern: String
}
