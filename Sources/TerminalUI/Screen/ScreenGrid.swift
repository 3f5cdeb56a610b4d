import ProxyModel

/// One screen cell: a grapheme and its style. The right half of a wide character is a cell with
/// empty `text` (a continuation), so every row has exactly `width` cells and columns line up.
public struct Cell: Sendable, Hashable {
    public var text: String
    public var style: CellStyle

    public init(text: String = " ", style: CellStyle = .plain) {
        self.text = text
        self.style = style
    }

    public static let blank = Cell()
    public var isContinuation: Bool { text.isEmpty }
}

/// A terminal screen as a grid of cells: what rendering produces and what tests read.
///
/// Rendering is a pure function of the UI state into a grid; the terminal backend compares the
/// new grid with the last one and sends only the cells that changed. Writing never wraps and
/// never spills past the grid: text is clipped, a wide character that would be cut in half is
/// replaced by a space, and control characters (C0, DEL, C1) and bidi overrides and isolates
/// (`TerminalText.isUnsafe`) are shown as `�` so captured bytes can never move the cursor or
/// reorder what is drawn.
public struct ScreenGrid: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public subscript(row: Int, column: Int) -> Cell {
        cells[row * width + column]
    }

    /// Writes `text` on `row` from `column`, using at most `limit` columns (default: to the
    /// right edge); returns the columns used. Rows and columns outside the grid write nothing.
    @discardableResult
    public mutating func put(_ text: String, row: Int, column: Int, limit: Int? = nil, style: CellStyle = .plain) -> Int {
        guard row >= 0, row < height, column >= 0, column < width else { return 0 }
        let end = min(width, column + max(0, limit ?? width))
        var position = column
        for character in text {
            let shown: Character = character.unicodeScalars.contains(where: TerminalText.isUnsafe) ? "\u{FFFD}" : character
            let columns = DisplayWidth.of(shown)
            if columns == 0 { continue }  // a lone combining mark or format character: nothing to draw
            if position + columns > end {
                if columns == 2, position < end { set(row, position, Cell(text: " ", style: style)); position += 1 }
                break
            }
            set(row, position, Cell(text: String(shown), style: style))
            if columns == 2 { set(row, position + 1, Cell(text: "", style: style)) }
            position += columns
        }
        return position - column
    }

    /// Paints `style` over columns `from..<to` of `row` with blanks (a bar, a selection).
    public mutating func fill(row: Int, from: Int = 0, to: Int? = nil, style: CellStyle) {
        guard row >= 0, row < height else { return }
        let start = max(0, from)
        let stop = min(width, to ?? width)
        guard start < stop else { return }
        for column in start..<stop { set(row, column, Cell(text: " ", style: style)) }
    }

    /// Changes only the style of columns `from..<to` of `row`, keeping their text.
    public mutating func restyle(row: Int, from: Int = 0, to: Int? = nil, _ change: (inout CellStyle) -> Void) {
        guard row >= 0, row < height else { return }
        for column in max(0, from)..<min(width, to ?? width) {
            change(&cells[row * width + column].style)
        }
    }

    /// The text of one row, continuation cells skipped, trailing spaces kept.
    public func rowText(_ row: Int) -> String {
        var text = ""
        for column in 0..<width {
            let cell = self[row, column]
            if !cell.isContinuation { text += cell.text }
        }
        return text
    }

    /// Every row's text with trailing spaces removed, joined by newlines: what snapshot tests compare.
    public var text: String {
        (0..<height).map { row in
            var line = rowText(row)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    private mutating func set(_ row: Int, _ column: Int, _ cell: Cell) {
        // Overwriting half of a wide character blanks its other half, so no orphan remains.
        let index = row * width + column
        if cells[index].isContinuation {
            if column > 0 { cells[index - 1] = Cell(text: " ", style: cells[index - 1].style) }
        } else if column + 1 < width, cells[index + 1].isContinuation {
            cells[index + 1] = Cell(text: " ", style: cells[index + 1].style)
        }
        cells[index] = cell
    }
}
