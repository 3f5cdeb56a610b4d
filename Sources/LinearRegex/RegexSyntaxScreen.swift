/// Reads a pattern as RE2 will and stops at the first construct a backtracking engine (ICU,
/// PCRE, the `NSRegularExpression` ProxyApp used before) runs but RE2 cannot, with its exact
/// position and a reason in words: backreferences, lookaround, atomic groups, possessive
/// quantifiers, conditionals, recursion, and constructs RE2 would silently read differently
/// (ICU's nested classes and `&&`). Pure: no RE2 call.
///
/// It also spells ICU's named group `(?<name>…)` as RE2's `(?P<name>…)`, so such patterns keep
/// working. Unbalanced parentheses are reported here too (RE2 names no position for them);
/// everything else (bad escapes, ranges, repeat counts) is left to RE2, whose errors
/// `RE2ErrorReason` words.
enum RegexSyntaxScreen {
    /// The pattern to hand RE2, or why it is refused.
    static func screen(_ pattern: String) -> Result<String, LinearRegexError> {
        var scanner = Scanner(Array(pattern.unicodeScalars))
        if let (offset, reason) = scanner.run() {
            let position = pattern.unicodeScalars.index(pattern.unicodeScalars.startIndex, offsetBy: offset)
            return .failure(LinearRegexError(pattern: pattern, position: position, reason: reason))
        }
        return .success(scanner.translated ?? pattern)
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0
        /// The pattern rewritten for RE2, once a rewrite was needed.
        var translated: String?
        /// Scalars up to here are already in `translated`.
        private var copiedUpTo = 0
        /// Where each group still open starts.
        private var openGroups: [Int] = []

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        private func at(_ offset: Int) -> Unicode.Scalar? {
            offset < scalars.count ? scalars[offset] : nil
        }

        private func isDigit(_ scalar: Unicode.Scalar?) -> Bool {
            guard let scalar else { return false }
            return ("0"..."9").contains(scalar)
        }

        /// The first refusal as (scalar offset, reason), or nil.
        mutating func run() -> (Int, String)? {
            while index < scalars.count {
                let refusal: (Int, String)?
                switch scalars[index] {
                case "\\": refusal = escape()
                case "[": refusal = characterClass()
                case "(":
                    openGroups.append(index)
                    refusal = group()
                case ")":
                    guard openGroups.popLast() != nil else {
                        return (index, "unexpected ): no group is open (write \\) for the character itself)")
                    }
                    index += 1
                    refusal = nil
                case "*", "+", "?": refusal = quantifier(after: index + 1)
                case "{": refusal = counted()
                default:
                    index += 1
                    refusal = nil
                }
                if let refusal { return refusal }
            }
            if let unclosed = openGroups.last {
                return (unclosed, "missing ) to close the group opened here")
            }
            if translated != nil { copy(upTo: scalars.count) }
            return nil
        }

        private mutating func copy(upTo end: Int) {
            var text = translated ?? ""
            text.unicodeScalars.append(contentsOf: scalars[copiedUpTo..<end])
            translated = text
            copiedUpTo = end
        }

        /// `\…` outside a class.
        private mutating func escape() -> (Int, String)? {
            let start = index
            guard let next = at(index + 1) else {
                index += 1  // a trailing backslash: RE2 reports it
                return nil
            }
            switch next {
            case "1"..."9":
                var end = index + 2
                while isDigit(at(end)) { end += 1 }
                let written = "\\" + String(String.UnicodeScalarView(scalars[(index + 1)..<end]))
                return (start, "backreferences like \(written) are not supported: \(LinearRegexError.linearTime)"
                    + " (for a character code write \\x0A)")
            case "k":
                return (start, "named backreferences like \\k<name> are not supported: \(LinearRegexError.linearTime)")
            case "g":
                return (start, "backreferences and subroutine calls like \\g1 are not supported: \(LinearRegexError.linearTime)")
            case "G":
                return (start, "\\G (where the previous match ended) is not supported (RE2 syntax)")
            case "Z":
                return (start, "\\Z is not supported (RE2 syntax): write \\z for the end of the text, or $")
            case "K":
                return (start, "\\K (restart the match here) is not supported: \(LinearRegexError.linearTime)")
            case "R":
                return (start, "\\R is not supported (RE2 syntax): write (?:\\r\\n|\\n|\\r) for a line break")
            case "X":
                return (start, "\\X (a whole grapheme) is not supported (RE2 syntax)")
            case "Q":
                // \Q…\E: literal text up to \E (or the end).
                index += 2
                while index < scalars.count, !(scalars[index] == "\\" && at(index + 1) == "E") { index += 1 }
                index = min(index + 2, scalars.count)
            case "x", "p", "P", "N":
                index += 2
                if at(index) == "{" { skipBraces() }
            default:
                index += 2
            }
            return nil
        }

        /// Past the `}` that closes the `{` at `index` (or to the end).
        private mutating func skipBraces() {
            while index < scalars.count, scalars[index] != "}" { index += 1 }
            index = min(index + 1, scalars.count)
        }

        /// `[…]`: escapes, POSIX classes `[:alpha:]`, a leading `]` or `^]` taken literally.
        private mutating func characterClass() -> (Int, String)? {
            index += 1
            if at(index) == "^" { index += 1 }
            if at(index) == "]" { index += 1 }
            while index < scalars.count {
                switch scalars[index] {
                case "]":
                    index += 1
                    return nil
                case "\\":
                    index += 2
                    if let previous = at(index - 1), ["x", "p", "P", "N"].contains(previous), at(index) == "{" { skipBraces() }
                case "[":
                    if at(index + 1) == ":" {
                        index += 2
                        while index < scalars.count, !(scalars[index] == ":" && at(index + 1) == "]") { index += 1 }
                        index = min(index + 2, scalars.count)
                    } else {
                        return (index, "nested character classes such as [a-z[0-9]] are not supported (RE2 syntax): "
                            + "put every character in one class, or write \\[ for a [")
                    }
                case "&" where at(index + 1) == "&":
                    return (index, "class intersections with && are not supported (RE2 syntax): write \\& for a &")
                default:
                    index += 1
                }
            }
            return nil  // unclosed: RE2 reports it
        }

        /// `(`: refuses the group kinds RE2 lacks; `(?<name>` becomes `(?P<name>`.
        private mutating func group() -> (Int, String)? {
            let start = index
            guard at(index + 1) == "?" else {
                index += 1
                return nil
            }
            let why = LinearRegexError.linearTime
            switch at(index + 2) {
            case "=": return (start, "lookahead (?= is not supported: \(why)")
            case "!": return (start, "negative lookahead (?! is not supported: \(why)")
            case "<" where at(index + 3) == "=": return (start, "lookbehind (?<= is not supported: \(why)")
            case "<" where at(index + 3) == "!": return (start, "negative lookbehind (?<! is not supported: \(why)")
            case "<" where at(index + 3).map { $0 == "_" || $0.properties.isAlphabetic } ?? false:
                copy(upTo: index)
                translated!.unicodeScalars.append(contentsOf: "(?P<".unicodeScalars)
                index += 3
                copiedUpTo = index
                return nil
            case ">": return (start, "atomic groups (?> are not supported: \(why)")
            case "(": return (start, "conditionals (?( are not supported: \(why)")
            case "|": return (start, "branch reset groups (?| are not supported (RE2 syntax)")
            case "#": return (start, "comments (?#…) are not supported (RE2 syntax): remove the comment")
            case "R", "&", "+":
                return (start, "recursion and subroutine calls like (?R) or (?1) are not supported: \(why)")
            case "P" where at(index + 3) == "=":
                return (start, "named backreferences like (?P=name) are not supported: \(why)")
            case "P" where at(index + 3) == ">":
                return (start, "recursion and subroutine calls like (?P>name) are not supported: \(why)")
            case "-" where isDigit(at(index + 3)):
                return (start, "recursion and subroutine calls like (?-1) are not supported: \(why)")
            case let scalar? where isDigit(scalar):
                return (start, "recursion and subroutine calls like (?R) or (?1) are not supported: \(why)")
            default:
                // Flags, (?i) or (?i:…): RE2 knows i, m, s and U; ICU's x changes how the rest reads.
                var end = index + 2
                while let scalar = at(end), scalar.properties.isAlphabetic || scalar == "-" {
                    if scalar == "x" {
                        return (end, "the flag x (free spacing) is not supported (RE2 syntax): remove it and the spaces it allowed")
                    }
                    end += 1
                }
                index += 2
                return nil
            }
        }

        /// After `*`, `+`, `?` or a counted repeat ending before `next`: a `+` makes it
        /// possessive; a `?` (lazy) is fine.
        private mutating func quantifier(after next: Int) -> (Int, String)? {
            if at(next) == "+" {
                let written = String(String.UnicodeScalarView(scalars[(index..<(next + 1))]))
                return (index, "possessive quantifiers like \(LinearRegexError.excerpt(written)) are not supported"
                    + " (drop the last +): \(LinearRegexError.linearTime)")
            }
            index = at(next) == "?" ? next + 1 : next
            return nil
        }

        /// `{`: a repeat `{n}`, `{n,}` or `{n,m}`, else a literal brace (as in RE2).
        private mutating func counted() -> (Int, String)? {
            var end = index + 1
            guard isDigit(at(end)) else {
                index += 1
                return nil
            }
            while isDigit(at(end)) { end += 1 }
            if at(end) == "," {
                end += 1
                while isDigit(at(end)) { end += 1 }
            }
            guard at(end) == "}" else {
                index += 1
                return nil
            }
            return quantifier(after: end + 1)
        }
    }
}
