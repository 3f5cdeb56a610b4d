import CRE2Shim

/// RE2's compile errors (a code and the fragment it blames) in words.
///
/// `RegexSyntaxScreen` catches what ICU or PCRE users typically write and RE2 cannot run before
/// RE2 sees the pattern; this covers the rest, so no message is ever RE2's raw text alone.
enum RE2ErrorReason {
    static func error(code: Int, fragment: String, pattern: String) -> LinearRegexError {
        let shown = LinearRegexError.excerpt(fragment)
        let reason: String
        switch code {
        case PROXYAPP_RE2_ERROR_BAD_ESCAPE:
            reason = "the escape \(shown) is not supported (RE2 syntax)"
        case PROXYAPP_RE2_ERROR_BAD_CHAR_CLASS:
            reason = "bad character class \(shown) (RE2 syntax)"
        case PROXYAPP_RE2_ERROR_BAD_CHAR_RANGE where fragment.hasPrefix("\\p") || fragment.hasPrefix("\\P") || fragment.hasPrefix("[:"):
            reason = "unknown character class \(shown) (RE2 syntax: e.g. \\p{L}, \\p{Greek}, [:alpha:])"
        case PROXYAPP_RE2_ERROR_BAD_CHAR_RANGE:
            reason = "the range \(shown) runs backwards: write the lower character first"
        case PROXYAPP_RE2_ERROR_MISSING_BRACKET:
            reason = "missing ] to close the character class \(shown)"
        case PROXYAPP_RE2_ERROR_MISSING_PAREN:
            reason = "missing ) to close a group"
        case PROXYAPP_RE2_ERROR_UNEXPECTED_PAREN:
            reason = "unexpected ): no group is open (write \\) for the character itself)"
        case PROXYAPP_RE2_ERROR_TRAILING_BACKSLASH:
            reason = "the pattern ends with a lone \\ (write \\\\ for a backslash)"
        case PROXYAPP_RE2_ERROR_REPEAT_ARGUMENT:
            reason = "\(shown) has nothing before it to repeat (write \\\(shown.prefix(1)) for the character itself)"
        case PROXYAPP_RE2_ERROR_REPEAT_SIZE:
            reason = "bad repeat count \(shown): counts go up to 1000, also multiplied across nested repeats (RE2 syntax)"
        case PROXYAPP_RE2_ERROR_REPEAT_OP:
            reason = "bad repetition \(shown): a repeat cannot itself be repeated; group it first, as in (?:a*)* (RE2 syntax)"
        case PROXYAPP_RE2_ERROR_BAD_PERL_OP:
            reason = "unsupported group syntax \(shown) (RE2 syntax: (…), (?:…), (?P<name>…), flags such as (?i) (?s) (?m) (?U))"
        case PROXYAPP_RE2_ERROR_BAD_UTF8:
            reason = "the pattern is not valid UTF-8"
        case PROXYAPP_RE2_ERROR_BAD_NAMED_CAPTURE:
            reason = "bad group name in \(shown): names are letters, digits and _"
        case PROXYAPP_RE2_ERROR_PATTERN_TOO_LARGE:
            reason = "the pattern is too large: compiled, it needs more than the \(LinearRegex.memoryLimit >> 20) MiB a regex may use; "
                + "shorten it or use smaller {n} counts"
        default:
            reason = "the pattern cannot be compiled (RE2 syntax)"
        }
        // RE2 names the fragment, not its place: the first occurrence is the one it stopped at
        // in all but contrived patterns (it parses left to right and stops at the first error).
        let position = code == PROXYAPP_RE2_ERROR_TRAILING_BACKSLASH && !pattern.isEmpty
            ? pattern.unicodeScalars.index(before: pattern.endIndex)
            : firstOccurrence(of: fragment, in: pattern)
        return LinearRegexError(pattern: pattern, position: position, reason: reason)
    }

    /// Where `fragment` first occurs in `pattern` (a short fragment; nil for a long one).
    private static func firstOccurrence(of fragment: String, in pattern: String) -> String.Index? {
        let needle = Array(fragment.utf8)
        guard !needle.isEmpty, needle.count <= 64 else { return nil }
        let utf8 = pattern.utf8
        var index = utf8.startIndex
        while index != utf8.endIndex {
            if utf8[index...].starts(with: needle) { return index }
            index = utf8.index(after: index)
        }
        return nil
    }
}
