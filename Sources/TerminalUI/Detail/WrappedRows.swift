/// A place in a detail page: a line, and the screen row within that line when it wraps.
public struct DetailPosition: Sendable, Hashable, Comparable {
    public var line: Int
    /// 0 unless the line wraps onto several rows.
    public var row: Int

    public init(line: Int, row: Int = 0) {
        self.line = line
        self.row = row
    }

    public static func < (left: DetailPosition, right: DetailPosition) -> Bool {
        (left.line, left.row) < (right.line, right.row)
    }
}

/// How a detail page's lines fall onto screen rows `width` columns wide: one row a line when
/// not wrapping, else as many as the line needs. Hex dumps never wrap (their layout is the point).
///
/// Works a line at a time, so scrolling a 16 MiB body touches only the lines it passes over and
/// nothing grows with the body: scrolling by rows walks at most that many lines.
struct WrappedRows {
    let page: DetailPage
    let width: Int
    let wraps: Bool

    /// Whether line `index` is wrapped (a body in hex is not).
    func wraps(_ index: Int) -> Bool {
        wraps && !(index >= page.head.count && page.mode == .hex)
    }

    /// Screen rows line `index` takes.
    func rowCount(_ index: Int) -> Int {
        wraps(index) ? page.line(index).wrappedRowCount(width: width) : 1
    }

    /// Line `index` cut into its screen rows.
    func rows(_ index: Int) -> [DetailLine] {
        wraps(index) ? page.line(index).wrapped(width: width) : [page.line(index)]
    }

    /// `position` moved by `delta` rows (negative: up), stopping at either end of the page.
    func advance(_ position: DetailPosition, by delta: Int) -> DetailPosition {
        guard page.lineCount > 0 else { return DetailPosition(line: 0) }
        var position = clampedRow(position)
        var count = rowCount(position.line)
        var remaining = delta
        while remaining > 0 {
            if position.row + 1 < count {
                position.row += 1
            } else if position.line + 1 < page.lineCount {
                position = DetailPosition(line: position.line + 1)
                count = rowCount(position.line)
            } else {
                break
            }
            remaining -= 1
        }
        while remaining < 0 {
            if position.row > 0 {
                position.row -= 1
            } else if position.line > 0 {
                position.line -= 1
                position.row = rowCount(position.line) - 1
            } else {
                break
            }
            remaining += 1
        }
        return position
    }

    /// The highest first position: the page's last row at the bottom of `rows` rows (at least
    /// one row stays in view on a screen too short for anything).
    func lastTop(rows: Int) -> DetailPosition {
        var remaining = max(1, rows)
        var index = page.lineCount - 1
        while index >= 0 {
            let count = rowCount(index)
            if count >= remaining { return DetailPosition(line: index, row: count - remaining) }
            remaining -= count
            index -= 1
        }
        return DetailPosition(line: 0)
    }

    /// `position` inside the page: its line exists and its row is one of that line's.
    func clampedRow(_ position: DetailPosition) -> DetailPosition {
        guard page.lineCount > 0 else { return DetailPosition(line: 0) }
        let line = min(max(0, position.line), page.lineCount - 1)
        let row = position.row <= 0 ? 0 : min(position.row, rowCount(line) - 1)
        return DetailPosition(line: line, row: row)
    }
}

extension DetailLine {
    /// The line cut into rows of at most `width` columns (a wide character that would straddle
    /// the edge starts the next row); the fill, if any, belongs to the last row.
    func wrapped(width: Int) -> [DetailLine] {
        guard width > 0 else { return [self] }
        var rows: [DetailLine] = []
        var current: [Run] = []
        var column = 0
        for run in runs {
            var text = ""
            for character in run.text {
                let columns = ScreenGrid.columns(of: character)
                if column + columns > width, column > 0 {
                    if !text.isEmpty { current.append(Run(text: text, style: run.style)) }
                    rows.append(DetailLine(current))
                    current = []
                    text = ""
                    column = 0
                }
                text.append(character)
                column += columns
            }
            if !text.isEmpty { current.append(Run(text: text, style: run.style)) }
        }
        rows.append(DetailLine(current, fill: fill, fillStyle: fillStyle))
        return rows
    }

    /// `wrapped(width:).count` without building the rows.
    func wrappedRowCount(width: Int) -> Int {
        guard width > 0 else { return 1 }
        var rows = 1
        var column = 0
        for run in runs {
            for character in run.text {
                let columns = ScreenGrid.columns(of: character)
                if column + columns > width, column > 0 {
                    rows += 1
                    column = 0
                }
                column += columns
            }
        }
        return rows
    }
}
