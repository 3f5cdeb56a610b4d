import ProxyModel

/// Draws the flow detail screen: a pure function of state and content into a `ScreenGrid`.
///
/// Row 0 is a reverse-video bar naming the flow (method, URL, status, size, duration), row 1
/// the tab titles with the current one highlighted, then the tab's content from the state's
/// line and column offsets, and the last row a status line (position, message, key hint).
/// Long lines wrap (`FlowDetailState.wraps`); unwrapped, lines wider than the screen are clipped
/// and Left and Right scroll them.
public enum FlowDetailRenderer {
    /// How many content lines fit on a screen `screenHeight` tall.
    public static func contentRows(screenHeight: Int) -> Int {
        max(0, screenHeight - 3)
    }

    static let hint = "Tab next tab  v view  q back  ? help"

    public static func render(_ state: FlowDetailState, content: FlowDetailContent, size: ScreenSize,
                              message: StatusMessage? = nil) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0, size.width > 0 else { return grid }
        ScreenChrome.drawTitleBar(titleBar(content.flow), into: &grid)
        guard size.height > 1 else { return grid }
        drawTabs(current: state.tab, content: state.showsOriginSide ? content.originSide : content, into: &grid)

        let page = state.page(state.tab, content: content)
        let rows = contentRows(screenHeight: size.height)
        let top: Int
        if state.wraps {
            top = drawWrapped(page, from: state.position(of: state.tab), rows: rows, into: &grid)
        } else {
            top = FlowDetailState.clampedTop(state.top(of: state.tab), lineCount: page.lineCount, rows: rows)
            for offset in 0..<rows {
                let index = top + offset
                guard index < page.lineCount else { break }
                grid.put(page.line(index), row: 2 + offset, skip: state.left(of: state.tab))
            }
        }
        if size.height > 2 {
            let position = page.lineCount == 0 ? "empty" : "line \(NumberText.grouped(top + 1)) of \(NumberText.grouped(page.lineCount))"
            let left = state.left(of: state.tab)
            ScreenChrome.drawStatusLine(position: left > 0 ? "\(position), column \(left + 1)" : position,
                                        message: message, hint: hint, row: size.height - 1, into: &grid)
        }
        return grid
    }

    /// Draws `page` from `position` with long lines wrapped onto `rows` rows; returns the first
    /// line shown. (Only a position past the end is clamped here: the state keeps the rest.)
    private static func drawWrapped(_ page: DetailPage, from position: DetailPosition, rows: Int,
                                    into grid: inout ScreenGrid) -> Int {
        let wrapped = WrappedRows(page: page, width: grid.width, wraps: true)
        let start = wrapped.clampedRow(position)
        var screenRow = 0
        var index = start.line
        var skip = start.row
        while screenRow < rows, index < page.lineCount {
            for line in wrapped.rows(index).dropFirst(skip) where screenRow < rows {
                grid.put(line, row: 2 + screenRow, skip: 0)
                screenRow += 1
            }
            skip = 0
            index += 1
        }
        return start.line
    }

    /// `#12  GET https://api.example.com/v1/users?page=2  200 OK  1.2 KiB  120 ms`.
    static func titleBar(_ flow: Flow) -> String {
        var parts: [String]
        switch flow.kind {
        case .tunnel:
            parts = ["\(flow.method) \(flow.urlHost):\(flow.port)", "tunnel",
                     FlowRow.humanSize(flow.bytesUp + flow.bytesDown)]
        case .http:
            parts = ["\(flow.method) \(flow.url)"]
            if let status = flow.status {
                parts.append(flow.reason.map { "\(status) \($0)" } ?? String(status))
                parts.append(FlowRow.humanSize(flow.responseBody.size))
            } else if let error = flow.error {
                parts.append("failed: \(error)")
            } else {
                parts.append("pending")
            }
        }
        if let duration = flow.durationMilliseconds { parts.append(FlowRow.humanDuration(duration)) }
        if let original = flow.replayOf { parts.insert("↻ #\(original)", at: 0) }  // sent again from that flow
        if let id = flow.id { parts.insert("#\(id)", at: 0) }  // what `export --curl ID` and `--raw ID` take
        return " " + parts.joined(separator: "  ")
    }

    /// Tab titles; a flow a rule changed says which side each message tab shows.
    private static func drawTabs(current: DetailTab, content: FlowDetailContent, into grid: inout ScreenGrid) {
        var column = 0
        for tab in content.tabs {
            let style = tab == current ? CellStyle(bold: true, reverse: true) : CellStyle(dim: true)
            column += grid.put(" \(tabTitle(tab, content: content)) ", row: 1, column: column, style: style) + 1
        }
    }

    /// `Request (client)`, `Request (forwarded)`, `Response (origin)`… for a flow with two sides.
    static func tabTitle(_ tab: DetailTab, content: FlowDetailContent) -> String {
        guard content.sideTitle(tab) != nil else { return tab.title }
        switch (tab, content.isOriginSide) {
        case (.request, true): return "Request (forwarded)"
        case (.response, true): return "Response (origin)"
        default: return "\(tab.title) (client)"
        }
    }
}

extension ScreenGrid {
    /// Draws `line` on `row` with its first `skip` columns scrolled off to the left, then its fill.
    mutating func put(_ line: DetailLine, row: Int, skip: Int) {
        var column = 0
        var toSkip = max(0, skip)
        for run in line.runs {
            var text = Substring(run.text)
            while toSkip > 0, let first = text.first {
                let columns = Self.columns(of: first)
                text = text.dropFirst()
                toSkip -= columns
                if toSkip < 0 {  // half of a wide character scrolled off: show the other half blank
                    column += put(" ", row: row, column: column, style: run.style)
                    toSkip = 0
                }
            }
            guard column < width else { return }
            column += put(String(text), row: row, column: column, style: run.style)
        }
        if let fill = line.fill, column < width {
            put(String(repeating: fill, count: width - column), row: row, column: column, style: line.fillStyle)
        }
    }

    /// Columns `character` takes as `put` draws it (a control character shows as a 1-column `�`).
    static func columns(of character: Character) -> Int {
        character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } ? 1 : DisplayWidth.of(character)
    }
}
