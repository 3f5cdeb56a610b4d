/// Draws a prompt over the bottom of any screen: the status line becomes `label text` with a
/// block cursor, and an error (a bad filter) takes the line above it in red.
///
/// The text scrolls sideways to keep the cursor on screen, so a long filter stays editable on a
/// narrow terminal.
public enum PromptRenderer {
    public static func draw(label: String, editor: LineEditor, error: String? = nil, into grid: inout ScreenGrid) {
        guard grid.height > 0, grid.width > 0 else { return }
        let row = grid.height - 1
        grid.fill(row: row, style: .plain)
        let labelWidth = grid.put(label, row: row, column: 0, limit: grid.width / 2, style: CellStyle(bold: true))
        let start = labelWidth + (labelWidth > 0 ? 1 : 0)
        let room = grid.width - start - 1
        guard room > 0 else { return }

        // Widths of the characters before the cursor decide how far to scroll.
        let characters = editor.text
        var first = 0
        var widthBeforeCursor = characters[0..<editor.cursor].reduce(0) { $0 + DisplayWidth.of($1) }
        while widthBeforeCursor >= room, first < editor.cursor {
            widthBeforeCursor -= DisplayWidth.of(characters[first])
            first += 1
        }
        let shown = String(characters[first...])
        grid.put(shown, row: row, column: start, limit: room + 1)
        let cursorColumn = start + widthBeforeCursor
        grid.restyle(row: row, from: cursorColumn, to: cursorColumn + 1) { $0.reverse = true }

        if let error, grid.height > 1 {
            grid.fill(row: row - 1, style: .plain)
            grid.put(error, row: row - 1, column: 0, style: CellStyle(foreground: .red, bold: true))
        }
    }
}

/// A yes/no question on the status line (`Delete all 1,234 flows? y/n`), or a choice of keys
/// (`copy: u URL  c curl …`), drawn in reverse video so it cannot be missed.
public enum ConfirmRenderer {
    public static func draw(question: String, choices: String = "y/n", into grid: inout ScreenGrid) {
        guard grid.height > 0 else { return }
        let row = grid.height - 1
        let style = CellStyle(foreground: .yellow, bold: true, reverse: true)
        grid.fill(row: row, style: style)
        grid.put("\(question)  \(choices)", row: row, column: 0, style: style)
    }
}
