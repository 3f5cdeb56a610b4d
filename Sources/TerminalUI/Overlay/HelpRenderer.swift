/// The `?` screen: every key of the view the user came from, listed from the same `KeyBindings`
/// table the dispatcher uses, plus the prompt's editing keys.
public enum HelpRenderer {
    /// Lines of the help text for `bindings` (keys padded to one column).
    public static func lines(for bindings: KeyBindings, title: String) -> [String] {
        let entries = bindings.helpEntries
        let keyWidth = min(28, entries.map { $0.keys.count }.max() ?? 0)
        var lines = [title, ""]
        for entry in entries {
            let keys = entry.keys.count < keyWidth ? entry.keys + String(repeating: " ", count: keyWidth - entry.keys.count) : entry.keys
            lines.append("  \(keys)  \(entry.description)")
        }
        lines += [
            "",
            "Prompts (/ filter, s search, e export, c curl): Enter accepts, Esc cancels,",
            "  Left/Right/Home/End, Ctrl-A/E and Alt-B/F move, Ctrl-U clears the line,",
            "  Ctrl-K deletes to the end, Ctrl-W or Alt-Backspace the word before it.",
            "Filter expressions: ~d domain  ~u url  ~m method  ~c code  ~h header  ~b body",
            "  ~t content type  ~q no response  ~e error  ~marked  ~tcp  ~rule rule name,",
            "  ~h2 HTTP/2  ~replay sent again (r), combined with ! & | ( ).",
            "  ~fts 'words' finds words in URLs, headers and text bodies (the index).",
        ]
        return lines
    }

    /// Draws `lines` from `scroll` with a title bar and a hint; returns the grid.
    public static func render(lines: [String], scroll: Int, size: ScreenSize) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0 else { return grid }
        let bar = CellStyle(reverse: true)
        grid.fill(row: 0, style: bar)
        grid.put("ProxyApp  key bindings", row: 0, column: 0, style: bar)
        let visible = max(0, size.height - 2)
        let first = min(max(0, scroll), max(0, lines.count - visible))
        for offset in 0..<visible where first + offset < lines.count {
            let line = lines[first + offset]
            grid.put(line, row: 1 + offset, column: 1, style: first + offset == 0 ? CellStyle(bold: true) : .plain)
        }
        if size.height > 1 {
            grid.put("j/k scroll  any other key closes", row: size.height - 1, column: 0, style: CellStyle(dim: true))
        }
        return grid
    }
}
