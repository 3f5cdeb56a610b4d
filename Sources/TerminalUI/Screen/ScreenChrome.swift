/// The rows every screen shares: a reverse-video title bar on top and a status line at the
/// bottom (position, a message, a dim key hint on the right), drawn the same way in each view.
enum ScreenChrome {
    static func drawTitleBar(_ text: String, row: Int = 0, into grid: inout ScreenGrid) {
        let style = CellStyle(reverse: true)
        grid.fill(row: row, style: style)
        grid.put(ColumnText.fitted(text, width: grid.width), row: row, column: 0, style: style)
    }

    /// `position` in bold, then the message (red when an error), then `hint` if it still fits.
    static func drawStatusLine(position: String, message: StatusMessage?, hint: String, row: Int,
                               into grid: inout ScreenGrid) {
        var column = grid.put(position, row: row, column: 0, style: CellStyle(bold: true))
        if let message {
            column += 2
            let style = message.kind == .error ? CellStyle(foreground: .red, bold: true) : CellStyle.plain
            column += grid.put(ColumnText.fitted(message.text, width: grid.width - column), row: row,
                               column: column, style: style)
        }
        let hintStart = grid.width - hint.count
        if hintStart > column + 2 {
            grid.put(hint, row: row, column: hintStart, style: CellStyle(dim: true))
        }
    }
}
