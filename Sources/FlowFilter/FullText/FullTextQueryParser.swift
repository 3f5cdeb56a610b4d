/// Reads the text of a `~fts` search: FTS5's query syntax, the parts a person types.
///
/// ```
/// query  := or
/// or     := and ('OR' and)*
/// and    := not (['AND'] not)*          two terms side by side must both match
/// not    := unit ('NOT' unit)*          `a NOT b`: a without b (NOT binds tightest)
/// unit   := phrase | '(' or ')' | field ':' unit | '{' field+ '}' ':' unit
/// phrase := (word | '"' text '"') ['*']  a word with punctuation is a phrase of its parts
///                                         (`https://host` too: a colon ends only a field name)
/// field  := url | headers | body | request | response
/// ```
/// `AND`, `OR`, `NOT` are operators only in capitals. Inside `"…"`, `""` is one quote. FTS5's
/// `NEAR(…)`, `^` and column numbers are not offered; a word that holds no letter or digit
/// (`...`) is refused, since it could match nothing.
///
/// Bounded: at most `maximumPhrases` phrases of `maximumWords` words in all, and
/// `maximumNesting` levels of parentheses and fields, so no search is costly to parse, render or
/// evaluate.
struct FullTextQueryParser {
    static let maximumPhrases = 64
    static let maximumNesting = 16
    static let maximumWords = 256

    /// Why a search could not be read, at a character of its text.
    struct SyntaxError: Error {
        var message: String
        var offset: Int
    }

    private enum Token: Equatable {
        case word(String, quoted: Bool)
        case open, close, openBrace, closeBrace, colon, star
        case end
    }

    private let characters: [Character]
    private var offset = 0
    private var tokenStart = 0
    private var phrases = 0
    private var words = 0
    private var nesting = 0

    init(_ text: String) {
        characters = Array(text)
    }

    mutating func parse() throws(SyntaxError) -> FullTextQuery {
        guard try peek() != .end else { throw SyntaxError(message: "~fts needs words to search for", offset: 0) }
        let query = try or()
        let token = try next()
        guard token == .end else { throw SyntaxError(message: "unexpected \(describe(token))", offset: tokenStart) }
        return query
    }

    private mutating func or() throws(SyntaxError) -> FullTextQuery {
        var query = try and()
        while try peek() == .word("OR", quoted: false) {
            _ = try next()
            query = .or(query, try and())
        }
        return query
    }

    private mutating func and() throws(SyntaxError) -> FullTextQuery {
        var query = try not()
        while true {
            let token = try peek()
            if token == .word("AND", quoted: false) {
                _ = try next()
            } else if !startsUnit(token) {
                return query
            }
            query = .and(query, try not())
        }
    }

    private mutating func not() throws(SyntaxError) -> FullTextQuery {
        var query = try unit()
        while try peek() == .word("NOT", quoted: false) {
            _ = try next()
            query = .andNot(query, try unit())
        }
        return query
    }

    private func startsUnit(_ token: Token) -> Bool {
        switch token {
        case .word(let word, let quoted): return quoted || !["AND", "OR", "NOT"].contains(word)
        case .open, .openBrace: return true
        default: return false
        }
    }

    private mutating func unit() throws(SyntaxError) -> FullTextQuery {
        let token = try next()
        let start = tokenStart
        switch token {
        case .open:
            try enter(at: start)
            let inner = try or()
            guard try next() == .close else { throw SyntaxError(message: "expected ')'", offset: tokenStart) }
            nesting -= 1
            return inner
        case .openBrace:
            var fields: Set<FullTextField> = []
            while case .word(let name, false) = try peek() {
                _ = try next()
                fields.formUnion(try field(name, at: tokenStart))
            }
            guard try next() == .closeBrace else {
                throw SyntaxError(message: "expected a field name or '}' (fields: \(Self.fieldList))", offset: tokenStart)
            }
            if fields.isEmpty { throw SyntaxError(message: "name at least one field between { and }", offset: start) }
            guard try next() == .colon else { throw SyntaxError(message: "expected ':' after '}'", offset: tokenStart) }
            return try limited(to: fields, at: start)
        case .word(let word, let quoted):
            if !quoted, try peek() == .colon {
                let fields = try field(word, at: start)
                _ = try next()
                return try limited(to: fields, at: start)
            }
            if !quoted, ["AND", "OR", "NOT"].contains(word) {
                throw SyntaxError(message: "\(word) needs a search term before it (quote it to find the word itself)",
                                  offset: start)
            }
            if !quoted, word == "NEAR", try peek() == .open {
                throw SyntaxError(message: "NEAR(…) is not supported: use a \"quoted phrase\" or AND", offset: start)
            }
            let phrase = FullTextTokenizer.words(word)
            if phrase.isEmpty {
                throw SyntaxError(message: "'\(word)' holds no letter or digit to search for", offset: start)
            }
            phrases += 1
            if phrases > Self.maximumPhrases {
                throw SyntaxError(message: "too many search terms (at most \(Self.maximumPhrases))", offset: start)
            }
            words += phrase.count
            if words > Self.maximumWords {
                throw SyntaxError(message: "too many words (at most \(Self.maximumWords))", offset: start)
            }
            var prefix = false
            if try peek() == .star {
                _ = try next()
                prefix = true
            }
            return .phrase(phrase, prefix: prefix)
        case .end:
            throw SyntaxError(message: "expected a search term", offset: start)
        default:
            throw SyntaxError(message: "expected a search term, not \(describe(token))", offset: start)
        }
    }

    /// The unit after a field filter, limited to `fields`.
    private mutating func limited(to fields: Set<FullTextField>, at start: Int) throws(SyntaxError) -> FullTextQuery {
        try enter(at: start)
        defer { nesting -= 1 }
        return .fields(fields, try unit())
    }

    private mutating func enter(at start: Int) throws(SyntaxError) {
        nesting += 1
        if nesting > Self.maximumNesting {
            throw SyntaxError(message: "nested too deeply (at most \(Self.maximumNesting) levels)", offset: start)
        }
    }

    private static let fieldList = "url, headers, body, request, response"

    private func field(_ name: String, at start: Int) throws(SyntaxError) -> Set<FullTextField> {
        guard let fields = FullTextField.names[name.lowercased()] else {
            throw SyntaxError(message: "unknown field '\(name)' (fields: \(Self.fieldList))", offset: start)
        }
        return fields
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .word(let word, _): return "'\(word)'"
        case .open: return "'('"
        case .close: return "')'"
        case .openBrace: return "'{'"
        case .closeBrace: return "'}'"
        case .colon: return "':'"
        case .star: return "'*'"
        case .end: return "end of search"
        }
    }

    // MARK: - Tokens

    private mutating func peek() throws(SyntaxError) -> Token {
        let saved = (offset, tokenStart)
        defer { (offset, tokenStart) = saved }
        return try next()
    }

    private mutating func next() throws(SyntaxError) -> Token {
        while offset < characters.count, characters[offset].isWhitespace { offset += 1 }
        tokenStart = offset
        guard offset < characters.count else { return .end }
        let character = characters[offset]
        offset += 1
        switch character {
        case "(": return .open
        case ")": return .close
        case "{": return .openBrace
        case "}": return .closeBrace
        case ":": return .colon
        case "*": return .star
        case "\"":
            var text = ""
            while offset < characters.count {
                let next = characters[offset]
                offset += 1
                if next == "\"" {
                    guard offset < characters.count, characters[offset] == "\"" else { return .word(text, quoted: true) }
                    offset += 1
                }
                text.append(next)
            }
            throw SyntaxError(message: "unclosed quote", offset: tokenStart)
        default:
            var text = String(character)
            while offset < characters.count, !characters[offset].isWhitespace {
                let next = characters[offset]
                // `url:x` names a field; the colon of `https://host` is part of the word.
                if Self.special.contains(next), next != ":" || FullTextField.names[text.lowercased()] != nil { break }
                text.append(next)
                offset += 1
            }
            return .word(text, quoted: false)
        }
    }

    private static let special: Set<Character> = ["(", ")", "{", "}", ":", "*", "\""]
}

extension FullTextQuery {
    /// Parses a search as `~fts` takes it (`FullTextQueryParser`), for callers that take the
    /// search alone (`proxyapp search`).
    /// - Throws: `FilterSyntaxError` over `text`, at the character at fault.
    public init(parsing text: String) throws(FilterSyntaxError) {
        var parser = FullTextQueryParser(text)
        do throws(FullTextQueryParser.SyntaxError) {
            self = try parser.parse()
        } catch {
            throw FilterSyntaxError(message: error.message, position: error.offset, text: text)
        }
    }
}
