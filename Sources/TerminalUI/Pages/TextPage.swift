/// A full screen of read-only text lines with a scroll position: the `i` info screen and the `E`
/// event log. `top` is nil while the page sits at its end (a log shows its newest lines and keeps
/// following new ones); scrolling up pins it to a line.
public struct TextPageState: Sendable, Hashable {
    /// The first line shown; nil: the last lines, following the end.
    public private(set) var top: Int?

    public init(atEnd: Bool = false) {
        top = atEnd ? nil : 0
    }

    public enum Move: Sendable, Hashable { case up, down, pageUp, pageDown, start, end }

    /// Applies `move` over a page of `lineCount` lines with `rows` rows on screen. Reaching the
    /// last page again means following the end.
    public mutating func apply(_ move: Move, lineCount: Int, rows: Int) {
        let lastTop = max(0, lineCount - max(1, rows))
        let current = top ?? lastTop
        let next: Int
        switch move {
        case .up: next = current - 1
        case .down: next = current + 1
        case .pageUp: next = current - max(1, rows)
        case .pageDown: next = current + max(1, rows)
        case .start: next = 0
        case .end: next = lastTop
        }
        let towardEnd = move == .down || move == .pageDown || move == .end
        top = towardEnd && next >= lastTop ? nil : min(max(0, next), lastTop)
    }

    /// The scroll keys every text page shares; nil for any other key.
    public static func move(for key: Key) -> Move? {
        switch key {
        case .character("k"), .up, .mouseWheelUp: .up
        case .character("j"), .down, .mouseWheelDown: .down
        case .pageUp, .control("b"): .pageUp
        case .pageDown, .character(" "), .control("f"): .pageDown
        case .character("g"), .home: .start
        case .character("G"), .end: .end
        default: nil
        }
    }
}

/// Draws a `TextPageState` over lines: a title bar, the lines (long ones wrapped, the rest of a
/// line indented by two columns), and a status line with the position and a hint.
public enum TextPageRenderer {
    /// Rows between the title bar and the status line.
    public static func rows(screenHeight: Int) -> Int { max(0, screenHeight - 2) }

    public static func render(title: String, lines: [String], state: TextPageState, hint: String,
                              size: ScreenSize, message: StatusMessage? = nil) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0, size.width > 0 else { return grid }
        ScreenChrome.drawTitleBar(title, into: &grid)
        let rows = rows(screenHeight: size.height)
        let lastTop = max(0, lines.count - max(1, rows))
        var shown: [String]
        let first: Int
        if let top = state.top {
            first = min(top, lastTop)
            shown = []
            var index = first
            while shown.count < rows, index < lines.count {
                shown += wrapped(lines[index], width: size.width)
                index += 1
            }
            shown = Array(shown.prefix(rows))
        } else {
            // At the end: wrap from the last line backwards until the screen is full.
            shown = []
            var index = lines.count
            while shown.count < rows, index > 0 {
                index -= 1
                shown.insert(contentsOf: wrapped(lines[index], width: size.width), at: 0)
            }
            first = index
            shown = Array(shown.suffix(rows))
        }
        for (offset, line) in shown.enumerated() {
            grid.put(line, row: 1 + offset, column: 0)
        }
        if size.height > 1 {
            let position: String
            if lines.isEmpty {
                position = "empty"
            } else if state.top == nil || first >= lastTop {
                position = "end (\(NumberText.grouped(lines.count)) \(lines.count == 1 ? "line" : "lines"))"
            } else {
                position = "line \(NumberText.grouped(first + 1)) of \(NumberText.grouped(lines.count))"
            }
            ScreenChrome.drawStatusLine(position: position, message: message, hint: hint, row: size.height - 1, into: &grid)
        }
        return grid
    }

    /// `line` cut into rows of at most `width` columns, at a space where one is in the second half
    /// of the row; rows after the first are indented two columns more than the line.
    static func wrapped(_ line: String, width: Int) -> [String] {
        guard width > 8, DisplayWidth.of(line) > width else { return [line] }
        let indent = String(repeating: " ", count: min(width / 2, line.prefix { $0 == " " }.count + 2))
        var rows: [String] = []
        var rest = Substring(line)
        var prefix = ""
        while !rest.isEmpty {
            let room = width - prefix.count
            var used = 0
            var end = rest.startIndex
            var lastSpace: Substring.Index?
            while end < rest.endIndex {
                let columns = DisplayWidth.of(rest[end])
                if used + columns > room { break }
                if rest[end] == " " { lastSpace = end }
                used += columns
                rest.formIndex(after: &end)
            }
            if end == rest.endIndex {
                rows.append(prefix + rest)
                break
            }
            var cut = end
            if let lastSpace, rest.distance(from: rest.startIndex, to: lastSpace) > room / 2 { cut = lastSpace }
            if cut == rest.startIndex { cut = rest.index(after: cut) }  // always move on
            rows.append(prefix + rest[..<cut])
            rest = rest[cut...].drop { $0 == " " }
            prefix = indent
        }
        return rows
    }
}
