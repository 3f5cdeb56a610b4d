/// A parsed filter expression: the tree `FlowFilter` evaluates against flows and the capture
/// store translates into SQL.
///
/// It exists apart from the parser so that other evaluators (SQL pre-filtering in CaptureStore,
/// later the TUI and rules) can walk the same tree. Regex arguments are compiled once, when the
/// text is parsed.
public indirect enum FilterExpression: Sendable, CustomStringConvertible {
    /// Both sides match (`a & b`, and juxtaposition `a b`).
    case and(FilterExpression, FilterExpression)
    /// Either side matches (`a | b`).
    case or(FilterExpression, FilterExpression)
    /// The operand does not match (`!a`).
    case not(FilterExpression)
    /// `~d REGEX`: the host.
    case domain(FilterRegex)
    /// `~u REGEX`, or a bare regex: the URL as `Flow.url` spells it.
    case url(FilterRegex)
    /// `~m REGEX`: the request method.
    case method(FilterRegex)
    /// `~c CODE`: the response status, exactly; never matches a flow without a response.
    case statusCode(Int)
    /// `~t`, `~tq`, `~ts REGEX`: the `Content-Type` header value of the request, the response or either.
    case contentType(FilterRegex, FilterMessageSide)
    /// `~h`, `~hq`, `~hs REGEX`: any header line, as `Name: value`, of the request, the response or either.
    case header(FilterRegex, FilterMessageSide)
    /// `~b`, `~bq`, `~bs REGEX`: the body, decoded per its `Content-Encoding`, as UTF-8 text.
    case body(FilterRegex, FilterMessageSide)
    /// `~fts`, `~ftsq`, `~ftss SEARCH`: words in the URL, header lines and textual bodies (of the
    /// request, the response or either), as the capture's full-text index finds them
    /// (`FullTextQuery`, `FullTextDocument`).
    case fullText(FullTextQuery, FilterMessageSide)
    /// `~rule REGEX`: the name of any rule that acted on the flow (`Flow.appliedRules`).
    case rule(FilterRegex)
    /// `~proxy REGEX`: the name of the proxy that captured the flow, in a shared capture
    /// (`Flow.proxyName`); never matches a flow of a proxy's own capture.
    case proxy(FilterRegex)
    /// `~q`: an HTTP request that has no response (yet, or ever).
    case requestWithoutResponse
    /// `~s`: a response arrived.
    case hasResponse
    /// `~e`: the flow records an error.
    case hasError
    /// `~marked`: the user marked the flow.
    case marked
    /// `~replay`: a flow the proxy sent again (replay, edit and resend, `send`, `import --curl`).
    case replay
    /// `~websocket`: the request asked for `Upgrade: websocket`.
    case websocket
    /// `~http`: an HTTP exchange (decoded, not an opaque tunnel).
    case http
    /// `~h2`: an exchange a client sent over HTTP/2 (one stream).
    case http2
    /// `~tcp`: an opaque tunnel (a CONNECT relayed as bytes).
    case tunnel
    /// `~all`: every flow.
    case all

    /// `Flow.httpVersion` of an HTTP/2 stream's exchange.
    public static let http2Version = "HTTP/2.0"

    /// The expression in the filter language, fully parenthesised (for logs and tests).
    public var description: String {
        switch self {
        case .and(let left, let right): return "(\(left) & \(right))"
        case .or(let left, let right): return "(\(left) | \(right))"
        case .not(let operand): return "!\(operand)"
        case .domain(let regex): return "~d \(regex)"
        case .url(let regex): return "~u \(regex)"
        case .method(let regex): return "~m \(regex)"
        case .statusCode(let code): return "~c \(code)"
        case .contentType(let regex, let side): return "~t\(side.suffix) \(regex)"
        case .header(let regex, let side): return "~h\(side.suffix) \(regex)"
        case .body(let regex, let side): return "~b\(side.suffix) \(regex)"
        case .fullText(let query, let side):
            return "~fts\(side.suffix) '" + query.ftsQuery.replacingOccurrences(of: "'", with: "\\'") + "'"
        case .rule(let regex): return "~rule \(regex)"
        case .proxy(let regex): return "~proxy \(regex)"
        case .requestWithoutResponse: return "~q"
        case .hasResponse: return "~s"
        case .hasError: return "~e"
        case .marked: return "~marked"
        case .replay: return "~replay"
        case .websocket: return "~websocket"
        case .http: return "~http"
        case .http2: return "~h2"
        case .tunnel: return "~tcp"
        case .all: return "~all"
        }
    }
}

/// Which message of a flow a header, content-type or body predicate looks at.
public enum FilterMessageSide: Sendable, Hashable, CaseIterable {
    /// The request or the response (`~h`, `~t`, `~b`).
    case either
    /// The request only (`~hq`, `~tq`, `~bq`).
    case request
    /// The response only (`~hs`, `~ts`, `~bs`).
    case response

    /// The operator suffix: `""`, `"q"` or `"s"`.
    var suffix: String {
        switch self {
        case .either: return ""
        case .request: return "q"
        case .response: return "s"
        }
    }
}

extension FilterExpression {
    /// True when evaluating needs the message bodies (`~b`, `~bq`, `~bs`): readers that can skip
    /// loading bodies (a list view's filter) ask this first.
    public var readsBodies: Bool {
        readsBodies(besidesFullText: false)
    }

    /// `readsBodies`, leaving out `~fts` when `besidesFullText`: a reader that answers full-text
    /// searches from its index (`matches(_:fullText:)`) need not load bodies for them.
    public func readsBodies(besidesFullText: Bool) -> Bool {
        contains { expression in
            switch expression {
            case .body: true
            case .fullText: !besidesFullText
            default: false
            }
        }
    }

    /// True when the expression holds a full-text search (`~fts`).
    public var searchesFullText: Bool {
        contains { if case .fullText = $0 { true } else { false } }
    }

    /// Every full-text search in the expression, left to right (for highlighting their words).
    public var fullTextSearches: [FullTextQuery] {
        var found: [FullTextQuery] = []
        var pending: [FilterExpression] = [self]
        while let expression = pending.popLast() {
            switch expression {
            case .and(let left, let right), .or(let left, let right): pending += [right, left]
            case .not(let operand): pending.append(operand)
            case .fullText(let query, _): found.append(query)
            default: break
            }
        }
        return found
    }

    /// True when evaluating needs headers (`~h`, `~t`, `~websocket`, and `~b`, which decodes by
    /// `Content-Encoding`): readers may skip parsing them otherwise.
    public var readsHeaders: Bool {
        contains { expression in
            switch expression {
            case .header, .contentType, .websocket, .body, .fullText: true
            default: false
            }
        }
    }

    /// Whether some predicate of the tree satisfies `test` (iterative: trees may be deep).
    private func contains(_ test: (FilterExpression) -> Bool) -> Bool {
        var pending: [FilterExpression] = [self]
        while let expression = pending.popLast() {
            switch expression {
            case .and(let left, let right), .or(let left, let right): pending += [left, right]
            case .not(let operand): pending.append(operand)
            default: if test(expression) { return true }
            }
        }
        return false
    }
}

extension FilterExpression {
    /// The operands of a chain of `&` (with `and`) or `|`, left to right, found without recursing
    /// per link: what SQL translations write as one flat list, so a chain of a thousand terms
    /// costs no depth.
    public func chainOperands(and: Bool) -> [FilterExpression] {
        var operands: [FilterExpression] = []
        var pending = [self]
        while let next = pending.popLast() {
            switch (next, and) {
            case (.and(let left, let right), true), (.or(let left, let right), false):
                pending.append(right)
                pending.append(left)
            default:
                operands.append(next)
            }
        }
        return operands
    }
}
