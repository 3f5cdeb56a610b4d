import LinearRegex

/// Turns filter text into a `FilterExpression` (recursive descent).
///
/// Grammar, loosest binding first (mitmproxy's):
/// ```
/// sequence := or+                 juxtaposition: `a b` is `a & b`, over whole `|` expressions
/// or       := and ('|' and)*
/// and      := unary ('&' unary)*
/// unary    := '!' unary | '(' sequence ')' | '~op' [argument] | word    (a bare word is `~u word`)
/// ```
///
/// Nesting (`(` and `!`) is capped at `maximumNesting` levels: each level is a call frame here and
/// in every walk of the tree, and a filter runs on worker threads with small stacks.
struct FilterParser {
    static let maximumNesting = 100

    private var lexer: FilterLexer
    private let text: String
    /// Open `(` and `!` around the current position.
    private var nesting = 0
    /// What the filter's regexes may compile to in all.
    private var regexBudget = LinearRegexBudget()

    init(_ text: String) {
        self.text = text
        self.lexer = FilterLexer(text)
    }

    mutating func parse() throws(FilterSyntaxError) -> FilterExpression {
        if text.allSatisfy(\.isWhitespace) { throw lexer.error("empty filter", at: 0) }
        let expression = try sequence()
        let token = try lexer.next()
        switch token.kind {
        case .end: return expression
        case .close: throw lexer.error("unexpected ')'", at: token.position)
        default: throw lexer.error("unexpected \(describe(token))", at: token.position)
        }
    }

    private mutating func sequence() throws(FilterSyntaxError) -> FilterExpression {
        var operands = [try or()]
        while true {
            switch try lexer.peek().kind {
            case .end, .close, .and, .or: return Self.balanced(operands, FilterExpression.and)
            default: operands.append(try or())
            }
        }
    }

    private mutating func or() throws(FilterSyntaxError) -> FilterExpression {
        var operands = [try and()]
        while try lexer.peek().kind == .or {
            _ = try lexer.next()
            operands.append(try and())
        }
        return Self.balanced(operands, FilterExpression.or)
    }

    private mutating func and() throws(FilterSyntaxError) -> FilterExpression {
        var operands = [try unary()]
        while try lexer.peek().kind == .and {
            _ = try lexer.next()
            operands.append(try unary())
        }
        return Self.balanced(operands, FilterExpression.and)
    }

    /// A chain `a | b | c | d` as a balanced tree, `((a | b) | (c | d))`: the same meaning and
    /// evaluation order as the left-leaning one, but log₂(n) deep, so a filter of thousands of
    /// terms does not overflow the stack of the code that walks (or frees) the tree. Three
    /// operands stay `((a | b) | c)`.
    private static func balanced(_ operands: [FilterExpression],
                                 _ join: (FilterExpression, FilterExpression) -> FilterExpression) -> FilterExpression
    {
        balanced(operands[...], join)
    }

    private static func balanced(_ operands: ArraySlice<FilterExpression>,
                                 _ join: (FilterExpression, FilterExpression) -> FilterExpression) -> FilterExpression
    {
        guard operands.count > 1 else { return operands.first! }
        let middle = operands.startIndex + (operands.count + 1) / 2
        return join(balanced(operands[..<middle], join), balanced(operands[middle...], join))
    }

    private mutating func unary() throws(FilterSyntaxError) -> FilterExpression {
        let token = try lexer.next()
        if token.kind == .not || token.kind == .open {
            guard nesting < Self.maximumNesting else {
                throw lexer.error("nested too deeply (more than \(Self.maximumNesting) levels)", at: token.position)
            }
            nesting += 1
        }
        defer { if token.kind == .not || token.kind == .open { nesting -= 1 } }
        switch token.kind {
        case .not:
            return .not(try unary())
        case .open:
            let expression = try sequence()
            let closing = try lexer.next()
            guard closing.kind == .close else {
                throw lexer.error("expected ')'", at: closing.position)
            }
            return expression
        case .operator(let name):
            return try predicate(name, at: token.position)
        case .word(let pattern):
            return .url(try regex(pattern, at: token.position))
        case .end:
            throw lexer.error("expected an expression", at: token.position)
        case .close, .and, .or:
            throw lexer.error("expected an expression before \(describe(token))", at: token.position)
        }
    }

    private mutating func predicate(_ name: String, at position: Int) throws(FilterSyntaxError) -> FilterExpression {
        switch name {
        case "q": return .requestWithoutResponse
        case "s": return .hasResponse
        case "e": return .hasError
        case "marked": return .marked
        case "replay": return .replay
        case "websocket": return .websocket
        case "http": return .http
        case "h2": return .http2
        case "tcp": return .tunnel
        case "all": return .all
        case "fts", "ftsq", "ftss":
            let (argument, start) = try lexer.argument(for: name)
            let side: FilterMessageSide = name == "fts" ? .either : name == "ftsq" ? .request : .response
            var search = FullTextQueryParser(argument)
            do throws(FullTextQueryParser.SyntaxError) {
                return .fullText(try search.parse(), side)
            } catch {
                let offsets = lexer.lastWordOffsets
                var message = error.message
                if lexer.lastWordCutShort { message += " (quote the search if it holds spaces or ')')" }
                // An error at the search's end stands just after its last character.
                let at = offsets.indices.contains(error.offset) ? offsets[error.offset]
                    : error.offset == offsets.count ? (offsets.last.map { $0 + 1 } ?? start) : start
                throw lexer.error(message, at: at)
            }
        case "c":
            let (argument, start) = try lexer.argument(for: name)
            guard let code = Int(argument), (0...999).contains(code) else {
                throw lexer.error("~c needs a status code (a number), not '\(argument)'", at: start)
            }
            return .statusCode(code)
        default:
            break
        }
        guard let make = Self.regexPredicates[name] else {
            throw lexer.error("unknown operator ~\(name)", at: position)
        }
        let (argument, start) = try lexer.argument(for: name)
        return make(try regex(argument, at: start, dotMatchesNewlines: Self.bodyPredicates.contains(name)))
    }

    /// The operators that take a regex, by name.
    private static let regexPredicates: [String: @Sendable (FilterRegex) -> FilterExpression] = [
        "d": { .domain($0) }, "u": { .url($0) }, "m": { .method($0) },
        "t": { .contentType($0, .either) }, "tq": { .contentType($0, .request) }, "ts": { .contentType($0, .response) },
        "h": { .header($0, .either) }, "hq": { .header($0, .request) }, "hs": { .header($0, .response) },
        "b": { .body($0, .either) }, "bq": { .body($0, .request) }, "bs": { .body($0, .response) },
        "rule": { .rule($0) }, "proxy": { .proxy($0) },
    ]

    /// Body regexes let `.` cross newlines, as mitmproxy's (DOTALL) do.
    private static let bodyPredicates: Set<String> = ["b", "bq", "bs"]

    /// Compiles the word just read. A pattern RE2 cannot run is refused here, at the character
    /// at fault when the error names one (else at the word), with the reason in words.
    private mutating func regex(_ pattern: String, at position: Int, dotMatchesNewlines: Bool = false) throws(FilterSyntaxError)
        -> FilterRegex
    {
        do throws(LinearRegexError) {
            return try FilterRegex(pattern, dotMatchesNewlines: dotMatchesNewlines, budget: &regexBudget)
        } catch {
            var message = "bad regex \"\(LinearRegexError.excerpt(pattern))\": \(error.reason)"
            if lexer.lastWordCutShort { message += " (quote it if it holds spaces or ')')" }
            let offsets = lexer.lastWordOffsets
            let at = error.characterOffset.flatMap { offsets.indices.contains($0) ? offsets[$0] : nil } ?? position
            throw lexer.error(message, at: at)
        }
    }

    private func describe(_ token: FilterToken) -> String {
        switch token.kind {
        case .not: return "'!'"
        case .and: return "'&'"
        case .or: return "'|'"
        case .open: return "'('"
        case .close: return "')'"
        case .operator(let name): return "~\(name)"
        case .word(let word): return "'\(word)'"
        case .end: return "end of filter"
        }
    }
}
