import FlowFilter

/// The words of the full-text searches in force (`~fts` in the filter or the search), shown in
/// reverse video wherever they appear in the detail view, so a match is found on the page the
/// search led to.
///
/// Words are compared as the index compares them (`FullTextTokenizer`: any case, no accents);
/// every word of a phrase is marked where it appears, and a prefix search (`tok*`) marks the
/// words starting so. Words under a `NOT` are never marked.
public struct WordHighlight: Sendable, Equatable {
    private let terms: FullTextTerms

    public init(_ searches: [FullTextQuery]) {
        terms = FullTextTerms(searches)
    }

    public var isEmpty: Bool { terms.isEmpty }

    /// `line` with the runs split so that every marked word is drawn reversed.
    func apply(to line: DetailLine) -> DetailLine {
        guard !isEmpty else { return line }
        var runs: [DetailLine.Run] = []
        for run in line.runs {
            let marked = terms.marked(in: run.text)
            guard !marked.isEmpty else {
                runs.append(run)
                continue
            }
            let scalars = Array(run.text.unicodeScalars)
            var emphasis = run.style
            emphasis.reverse.toggle()
            var offset = 0
            for token in marked {
                if token.range.lowerBound > offset {
                    runs.append(.init(text: Self.text(scalars[offset..<token.range.lowerBound]), style: run.style))
                }
                runs.append(.init(text: Self.text(scalars[token.range]), style: emphasis))
                offset = token.range.upperBound
            }
            if offset < scalars.count { runs.append(.init(text: Self.text(scalars[offset...]), style: run.style)) }
        }
        return DetailLine(runs, fill: line.fill, fillStyle: line.fillStyle)
    }

    private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return String(text)
    }
}
