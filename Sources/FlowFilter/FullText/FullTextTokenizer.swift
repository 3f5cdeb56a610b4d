import Foundation

/// Splits text into the words a full-text search compares, as the capture's SQLite index
/// (FTS5's `unicode61` tokenizer with `remove_diacritics 2`) does, so that a search evaluated in
/// Swift (a breakpoint on a live flow) finds what the index finds.
///
/// A word is a run of letters, digits, combining marks and private-use characters; everything
/// else (spaces, punctuation, symbols, controls) separates words. Words compare in lower case
/// without diacritics: `Café` and `cafe` are one word, `user_id` is two (`user`, `id`).
/// ASCII, the common case, takes a fast path.
public enum FullTextTokenizer {
    /// One word: its folded text and where it stands in the text, in unicode-scalar offsets.
    public struct Token: Equatable, Sendable {
        public var text: String
        public var range: Range<Int>
    }

    /// The folded words of `text`, in order.
    public static func words(_ text: String) -> [String] {
        tokens(text).map(\.text)
    }

    /// The words of `text` with their positions (for highlighting).
    public static func tokens(_ text: String) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var start = 0
        var offset = 0
        func close() {
            if !current.isEmpty {
                tokens.append(Token(text: current, range: start..<offset))
                current = ""
            }
        }
        for scalar in text.unicodeScalars {
            defer { offset += 1 }
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(value)
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if current.isEmpty { start = offset }
                    current.unicodeScalars.append(scalar)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    if current.isEmpty { start = offset }
                    current.unicodeScalars.append(Unicode.Scalar(byte + 32))
                default:
                    close()
                }
                continue
            }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                if current.isEmpty { start = offset }
                current.unicodeScalars.append(contentsOf: folded(scalar))
            case .nonspacingMark, .spacingMark, .enclosingMark:
                // Part of the word, and dropped as a diacritic.
                if current.isEmpty { start = offset }
            default:
                close()
            }
        }
        close()
        return tokens
    }

    /// `scalar` in lower case with its diacritics removed (`É` → `e`, `İ` → `i`, `ß` stays).
    private static func folded(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        // SQLite folds case as Unicode case folding does where it differs from lower case: the
        // final sigma is a sigma.
        if scalar == "\u{03C2}" { return ["\u{03C3}"] }
        for lower in scalar.properties.lowercaseMapping.unicodeScalars {
            for part in String(lower).decomposedStringWithCanonicalMapping.unicodeScalars where !isMark(part) {
                result.append(part)
            }
        }
        return result
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
