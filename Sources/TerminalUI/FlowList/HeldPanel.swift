/// The exchanges held at breakpoints, as the flow list shows them above its rows: one line each,
/// oldest first, in a colour of their own, the one that `a`, `x` act on marked.
public struct HeldPanel: Sendable, Hashable {
    /// One held exchange, already in words: `request  POST https://api.example.com/login  12s`.
    public var lines: [String]
    /// The line `a` and `x` act on.
    public var selected: Int

    /// At most this many lines are shown (a line says how many more are held).
    public static let maximumLines = 5

    public init(lines: [String], selected: Int) {
        self.lines = lines
        self.selected = selected
    }

    /// Screen rows the panel takes: its lines (up to the maximum, one saying how many more).
    public var rows: Int { lines.isEmpty ? 0 : min(lines.count, Self.maximumLines) }

    /// The lines as drawn: `⏸` before each, `▶` on the selected one; past the maximum the last
    /// line counts the rest.
    public var shownLines: [String] {
        guard !lines.isEmpty else { return [] }
        var shown: [String] = []
        let first = max(0, min(selected - Self.maximumLines + 2, lines.count - Self.maximumLines))
        for index in first..<min(lines.count, first + Self.maximumLines) {
            shown.append((index == selected ? "▶ ⏸ " : "  ⏸ ") + lines[index])
        }
        if lines.count > Self.maximumLines, shown.count == Self.maximumLines {
            shown[Self.maximumLines - 1] = "  … \(lines.count - Self.maximumLines + 1) more held (Tab moves, A accepts all)"
        }
        return shown
    }
}
