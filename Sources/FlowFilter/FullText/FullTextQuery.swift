/// A full-text search (`~fts`), parsed: phrases combined with `AND`, `OR` and `NOT`, maybe
/// limited to some fields of a flow.
///
/// It exists so that one search means the same wherever it runs: the capture store renders it
/// as an FTS5 query (`ftsQuery`) for its index, and a flow that never reached the store (a
/// breakpoint's) is checked in Swift (`matches`) over the same `FullTextDocument` with the same
/// `FullTextTokenizer`. Every word the user typed is quoted on the way to SQLite, so no input can
/// reach FTS5's own parser as syntax.
public indirect enum FullTextQuery: Sendable, Equatable, CustomStringConvertible {
    /// Words that must follow each other in one field (`"user id"`, or `user_id`); with
    /// `prefix`, the last one only has to start so (`tok*`).
    case phrase([String], prefix: Bool)
    case and(FullTextQuery, FullTextQuery)
    case or(FullTextQuery, FullTextQuery)
    /// Matches the first and not the second (FTS5's binary `a NOT b`).
    case andNot(FullTextQuery, FullTextQuery)
    /// The inner query, looking only at these fields (`url: x`, `{headers body}: x`).
    case fields(Set<FullTextField>, FullTextQuery)

    /// The query in FTS5's syntax: every phrase double-quoted, every field set spelled out as
    /// column names.
    public var ftsQuery: String {
        switch self {
        case .phrase(let words, let prefix):
            return "\"" + words.joined(separator: " ") + "\"" + (prefix ? " *" : "")
        case .and(let left, let right): return "(\(left.ftsQuery) AND \(right.ftsQuery))"
        case .or(let left, let right): return "(\(left.ftsQuery) OR \(right.ftsQuery))"
        case .andNot(let left, let right): return "(\(left.ftsQuery) NOT \(right.ftsQuery))"
        case .fields(let fields, let inner):
            return "{" + FullTextField.allCases.filter(fields.contains).map(\.column).joined(separator: " ") + "} : ("
                + inner.ftsQuery + ")"
        }
    }

    public var description: String { ftsQuery }

    /// Whether the document's words, field by field, satisfy the query within `fields`.
    public func matches(_ document: FullTextDocument.Words, in fields: Set<FullTextField> = Set(FullTextField.allCases))
        -> Bool
    {
        switch self {
        case .phrase(let words, let prefix):
            return fields.contains { field in Self.contains(document[field], words, prefix: prefix) }
        case .and(let left, let right): return left.matches(document, in: fields) && right.matches(document, in: fields)
        case .or(let left, let right): return left.matches(document, in: fields) || right.matches(document, in: fields)
        case .andNot(let left, let right):
            return left.matches(document, in: fields) && !right.matches(document, in: fields)
        case .fields(let limited, let inner):
            return inner.matches(document, in: fields.intersection(limited))
        }
    }

    /// Whether `phrase` occurs as consecutive words of `words` (the last one as a prefix when
    /// `prefix`).
    private static func contains(_ words: [String], _ phrase: [String], prefix: Bool) -> Bool {
        guard !phrase.isEmpty, words.count >= phrase.count else { return false }
        let last = phrase.count - 1
        for start in 0...(words.count - phrase.count) {
            var found = true
            for index in 0...last {
                let word = words[start + index]
                let wanted = phrase[index]
                if index == last && prefix ? !word.hasPrefix(wanted) : word != wanted {
                    found = false
                    break
                }
            }
            if found { return true }
        }
        return false
    }
}

/// A part of a flow the full-text index keeps apart (one FTS5 column each), so a search can be
/// limited to some (`url:`, `headers:`, `~ftsq`).
public enum FullTextField: String, Sendable, Hashable, CaseIterable {
    case url
    case requestHeaders
    case requestBody
    case responseHeaders
    case responseBody

    /// The index's column.
    public var column: String {
        switch self {
        case .url: return "url"
        case .requestHeaders: return "request_headers"
        case .requestBody: return "request_body"
        case .responseHeaders: return "response_headers"
        case .responseBody: return "response_body"
        }
    }

    /// The fields of one side of the exchange (`~ftsq`: the URL counts as the request's).
    public static func side(_ side: FilterMessageSide) -> Set<FullTextField> {
        switch side {
        case .either: return Set(allCases)
        case .request: return [.url, .requestHeaders, .requestBody]
        case .response: return [.responseHeaders, .responseBody]
        }
    }

    /// The names a query may put before `:`, and the fields each covers.
    static let names: [String: Set<FullTextField>] = [
        "url": [.url],
        "headers": [.requestHeaders, .responseHeaders],
        "body": [.requestBody, .responseBody],
        "request": side(.request),
        "response": side(.response),
    ]
}
