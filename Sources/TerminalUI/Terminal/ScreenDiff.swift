/// Turns the change from one `ScreenGrid` to the next into the bytes a terminal needs: only the
/// cells that changed, one cursor move per run of changed cells, one SGR sequence per style change.
///
/// Pure, so tests compare its bytes exactly and replay them on a model terminal. Every output
/// ends with an SGR reset, so the next diff may assume the terminal's style is plain.
public enum ScreenDiff {
    /// The bytes that turn a terminal showing `previous` into one showing `next`. A nil
    /// `previous` (first frame, or screen state unknown) or a size change clears the screen
    /// first and then draws every cell that is not blank. Equal grids give no bytes.
    public static func bytes(from previous: ScreenGrid?, to next: ScreenGrid) -> [UInt8] {
        var output = ""
        let base: ScreenGrid
        if let previous, previous.width == next.width, previous.height == next.height {
            base = previous
        } else {
            output += "\u{1B}[0m\u{1B}[2J"  // the cleared screen is a blank grid: diff against that
            base = ScreenGrid(width: next.width, height: next.height)
        }
        var cursor: (row: Int, column: Int)? = nil  // unknown until we position it
        var style = CellStyle.plain
        var wroteCells = false
        for row in 0..<next.height {
            let changed = changedColumns(row: row, base: base, next: next)
            for column in 0..<next.width where changed[column] {
                let cell = next[row, column]
                if cell.isContinuation { continue }  // the wide character before it covers it
                if cursor == nil || cursor! != (row, column) {
                    output += "\u{1B}[\(row + 1);\(column + 1)H"
                }
                if cell.style != style {
                    output += sgr(cell.style)
                    style = cell.style
                }
                output += cell.text
                wroteCells = true
                let columns = column + 1 < next.width && next[row, column + 1].isContinuation ? 2 : 1
                // At the right edge the terminal's cursor waits to wrap: treat it as unknown.
                cursor = column + columns < next.width ? (row, column + columns) : nil
            }
        }
        if output.isEmpty { return [] }
        if wroteCells || style != .plain { output += "\u{1B}[0m" }
        return Array(output.utf8)
    }

    /// The SGR sequence that sets exactly `style` (it starts from a reset).
    public static func sgr(_ style: CellStyle) -> String {
        var parameters = ["0"]
        if style.bold { parameters.append("1") }
        if style.dim { parameters.append("2") }
        if style.underline { parameters.append("4") }
        if style.reverse { parameters.append("7") }
        if let foreground = style.foreground { parameters.append(String(colorCode(foreground, normal: 30, bright: 90))) }
        if let background = style.background { parameters.append(String(colorCode(background, normal: 40, bright: 100))) }
        return "\u{1B}[" + parameters.joined(separator: ";") + "m"
    }

    private static func colorCode(_ color: TerminalColor, normal: Int, bright: Int) -> Int {
        let index = Int(color.rawValue)
        return index < 8 ? normal + index : bright + index - 8
    }

    /// Columns of `row` to write. A changed continuation cell (or a cell that used to be one)
    /// pulls in the column before it, since only a wide character can draw a right half and
    /// overwriting a right half erases the left one.
    private static func changedColumns(row: Int, base: ScreenGrid, next: ScreenGrid) -> [Bool] {
        var changed = (0..<next.width).map { base[row, $0] != next[row, $0] }
        for column in stride(from: next.width - 1, to: 0, by: -1) where changed[column] {
            if next[row, column].isContinuation || base[row, column].isContinuation {
                changed[column - 1] = true
            }
        }
        return changed
    }
}
