/// The words a search shows as found: every word of its phrases outside a `NOT`'s right side
/// (a prefix search's last word as a prefix). Excerpts and the detail view mark them.
public struct FullTextTerms: Sendable, Equatable {
    private var words: Set<String> = []
    private var prefixes: [String] = []

    public init(_ searches: [FullTextQuery]) {
        var pending = searches
        while let query = pending.popLast() {
            switch query {
            case .phrase(let phrase, let prefix):
                words.formUnion(prefix ? phrase.dropLast() : phrase[...])
                if prefix, let last = phrase.last { prefixes.append(last) }
            case .and(let left, let right), .or(let left, let right): pending += [left, right]
            case .andNot(let left, _): pending.append(left)
            case .fields(_, let inner): pending.append(inner)
            }
        }
    }

    public var isEmpty: Bool { words.isEmpty && prefixes.isEmpty }

    /// Whether `word` (folded, as `FullTextTokenizer` gives it) is one to mark.
    public func marks(_ word: String) -> Bool {
        words.contains(word) || prefixes.contains { word.hasPrefix($0) }
    }

    /// The words of `text` to mark, with their positions.
    public func marked(in text: String) -> [FullTextTokenizer.Token] {
        isEmpty ? [] : FullTextTokenizer.tokens(text).filter { marks($0.text) }
    }
}

/// A few words around what a search found in each field of a flow, cut in Swift from the
/// flow's `FullTextDocument` (the index keeps no text): what `proxyapp search` prints under each
/// match.
public enum FullTextExcerpt {
    /// Words shown before the first marked word and after it.
    static let wordsBefore = 5, wordsAfter = 12

    /// Per field of `side` that holds a marked word, in field order: the text from a few words
    /// before the first to a dozen after, each marked word between `start` and `end`, and `…`
    /// where the field's text goes on.
    public static func excerpts(of document: FullTextDocument, search: FullTextQuery, side: FilterMessageSide = .either,
                                start: Character = "\u{E000}", end: Character = "\u{E001}")
        -> [(field: FullTextField, text: String)]
    {
        let terms = FullTextTerms([search])
        let fields = FullTextField.side(side)
        return FullTextField.allCases.filter(fields.contains).compactMap { field in
            let text = document[field]
            let tokens = FullTextTokenizer.tokens(text)
            guard let first = tokens.firstIndex(where: { terms.marks($0.text) }) else { return nil }
            let scalars = Array(text.unicodeScalars)
            // From the field's start when no word is cut off before, to its end likewise.
            let from = first <= wordsBefore ? 0 : tokens[first - wordsBefore].range.lowerBound
            let last = min(tokens.count - 1, first + wordsAfter)
            let to = last == tokens.count - 1 ? scalars.count : tokens[last].range.upperBound
            var excerpt = from > 0 ? "…" : ""
            var offset = from
            for token in tokens[first...last] where terms.marks(token.text) {
                excerpt.unicodeScalars.append(contentsOf: scalars[offset..<token.range.lowerBound])
                excerpt.append(start)
                excerpt.unicodeScalars.append(contentsOf: scalars[token.range])
                excerpt.append(end)
                offset = token.range.upperBound
            }
            excerpt.unicodeScalars.append(contentsOf: scalars[offset..<to])
            if to < scalars.count { excerpt += "…" }
            return (field, excerpt)
        }
    }
}
