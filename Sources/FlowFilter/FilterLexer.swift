/// One lexical unit of a filter expression, with where it starts.
struct FilterToken: Equatable {
    enum Kind: Equatable {
        case not, and, or, open, close
        /// `~name`; the name without the tilde.
        case `operator`(String)
        /// An unquoted word or a quoted string, unescaped.
        case word(String)
        case end
    }

    var kind: Kind
    /// Character offset of the token's first character.
    var position: Int
}

/// Splits filter text into tokens on demand. The parser asks for either the next token or an
/// operator's argument: only in the second case do `!`, `(` and `&` begin a word (a regex may
/// start with them).
///
/// Quoting: `"..."` or `'...'`; inside, `\"`, `\'` and `\\` stand for the character itself and
/// every other backslash is kept, so regex escapes (`\d`, `\.`) need no doubling. An unquoted
/// word runs to the next whitespace or `)`.
struct FilterLexer {
    private let characters: [Character]
    private let text: String
    private(set) var offset = 0
    /// The last word read: where each of its characters stands in the text (quotes and
    /// escapes make the two differ), so a regex error inside it is reported at its own
    /// character; and whether it was unquoted and ended at a space or `)` with text after it
    /// (quoting might have kept more of it).
    private(set) var lastWordOffsets: [Int] = []
    private(set) var lastWordCutShort = false

    init(_ text: String) {
        self.text = text
        self.characters = Array(text)
    }

    /// The next token in operator position.
    mutating func next() throws(FilterSyntaxError) -> FilterToken {
        skipWhitespace()
        let start = offset
        guard offset < characters.count else { return FilterToken(kind: .end, position: start) }
        let character = characters[offset]
        let single: FilterToken.Kind? = switch character {
        case "!": .not
        case "&": .and
        case "|": .or
        case "(": .open
        case ")": .close
        default: nil
        }
        if let single {
            offset += 1
            return FilterToken(kind: single, position: start)
        }
        if character == "~" {
            offset += 1
            var name = ""
            while offset < characters.count, characters[offset].isASCII, characters[offset].isLetter {
                name.append(characters[offset])
                offset += 1
            }
            if name.isEmpty { throw error("expected an operator name after ~", at: start) }
            // `~h2` alone is the HTTP/2 predicate; `~h2…` followed by more is `~h` with a regex.
            if name == "h", offset < characters.count, characters[offset] == "2",
               offset + 1 == characters.count || " \t)&|".contains(characters[offset + 1]) {
                name = "h2"
                offset += 1
            }
            return FilterToken(kind: .operator(name), position: start)
        }
        return FilterToken(kind: .word(try word()), position: start)
    }

    /// Looks at the next token without consuming it.
    mutating func peek() throws(FilterSyntaxError) -> FilterToken {
        let saved = offset
        defer { offset = saved }
        return try next()
    }

    /// The argument of `operatorName`, with where it starts.
    mutating func argument(for operatorName: String) throws(FilterSyntaxError) -> (String, Int) {
        skipWhitespace()
        let start = offset
        let missing = offset == characters.count || ")&|".contains(characters[offset])
            || (characters[offset] == "~" && offset + 1 < characters.count && characters[offset + 1].isLetter)
        if missing { throw error("~\(operatorName) needs an argument", at: start) }
        return (try word(), start)
    }

    private mutating func word() throws(FilterSyntaxError) -> String {
        let quote = characters[offset]
        lastWordOffsets = []
        lastWordCutShort = false
        guard quote == "\"" || quote == "'" else {
            var word = ""
            while offset < characters.count, !characters[offset].isWhitespace, characters[offset] != ")" {
                word.append(characters[offset])
                lastWordOffsets.append(offset)
                offset += 1
            }
            lastWordCutShort = offset < characters.count
            return word
        }
        let start = offset
        offset += 1
        var word = ""
        while offset < characters.count {
            let character = characters[offset]
            if character == quote {
                offset += 1
                return word
            }
            lastWordOffsets.append(offset)
            if character == "\\", offset + 1 < characters.count,
               ["\"", "'", "\\"].contains(characters[offset + 1]) {
                word.append(characters[offset + 1])
                offset += 2
                continue
            }
            word.append(character)
            offset += 1
        }
        throw error("unclosed quote", at: start)
    }

    private mutating func skipWhitespace() {
        while offset < characters.count, characters[offset].isWhitespace { offset += 1 }
    }

    func error(_ message: String, at position: Int) -> FilterSyntaxError {
        FilterSyntaxError(message: message, position: position, text: text)
    }
}
