/// Draws the flow list screen: a pure function of the list state into a `ScreenGrid`.
///
/// Row 0 is the header bar, row 1 the column titles, the rows between are flows (the list area,
/// `listRows(screenHeight:)` tall) and the last row is the status line, which shows the selected
/// flow's whole URL when there is no message. An empty, unfiltered list shows `welcome` (how to
/// send traffic, the CA page, the rules) under "No flows yet". No terminal I/O here:
/// tests render into fixed-size grids and read the text and styles back.
public enum FlowListRenderer {
    /// How many flow rows fit on a screen `screenHeight` tall: what `FlowListState.resize` takes.
    public static func listRows(screenHeight: Int, heldRows: Int = 0) -> Int {
        max(0, screenHeight - 3 - heldRows)
    }

    /// `highlighted`: flows matching the search, underlined in bold.
    public static func render(_ state: FlowListState, header: HeaderInfo, size: ScreenSize,
                              message: StatusMessage? = nil, welcome: [String] = [],
                              highlighted: Set<Int64> = [], held: HeldPanel? = nil) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0, size.width > 0 else { return grid }
        ScreenChrome.drawTitleBar(header.text(width: size.width), into: &grid)
        guard size.height > 1 else { return grid }

        // Exchanges held at breakpoints come first, in black on yellow: they wait for a person.
        let heldLines = Array((held?.shownLines ?? []).prefix(max(0, size.height - 3)))
        for (offset, line) in heldLines.enumerated() {
            let style = CellStyle(foreground: .black, background: .yellow, bold: line.hasPrefix("▶"))
            grid.fill(row: 1 + offset, style: style)
            grid.put(line, row: 1 + offset, column: 0, style: style)
        }
        let shift = heldLines.count
        let listHeight = listRows(screenHeight: size.height, heldRows: shift)
        let shown = state.top..<min(state.totalRows, state.top + listHeight)
        let largestID = shown.compactMap { state.row(at: $0)?.id }.max() ?? 0
        let proxyNameWidth = shown.compactMap { state.row(at: $0)?.proxy.map { DisplayWidth.of($0) } }.max() ?? 0
        let columns = FlowListColumns(screenWidth: size.width, idDigits: String(largestID).count,
                                      proxyNameWidth: proxyNameWidth)
        let titleStyle = CellStyle(bold: true, underline: true)
        for column in columns.all where !column.title.isEmpty {
            grid.put(column.title, row: 1 + shift, in: column, style: titleStyle)
        }

        if state.totalRows == 0, listHeight > 0 {
            let empty = state.filterText.isEmpty ? "No flows yet: waiting for traffic." : "No flows match the filter."
            grid.put(empty, row: 2 + shift, column: 2, style: CellStyle(dim: true))
            if state.filterText.isEmpty {
                let lines = welcome.flatMap { TextPageRenderer.wrapped($0, width: size.width - 2) }
                for (offset, line) in lines.prefix(max(0, listHeight - 2)).enumerated() {
                    grid.put(line, row: 4 + shift + offset, column: 2)
                }
            }
        }
        for offset in 0..<listHeight {
            let index = state.top + offset
            guard index < state.totalRows else { break }
            let screenRow = 2 + shift + offset
            if let row = state.row(at: index) {
                draw(row, on: screenRow, columns: columns, into: &grid)
                if let id = row.id, highlighted.contains(id) {
                    grid.restyle(row: screenRow) { $0.bold = true; $0.underline = true }
                }
            } else {
                grid.put("…", row: screenRow, column: columns.id.start, style: CellStyle(dim: true))
            }
            if index == state.selectedIndex {
                grid.restyle(row: screenRow) { $0.reverse = true }
            }
        }
        if size.height > 2 {
            drawStatusLine(state, message: message, row: size.height - 1, into: &grid)
        }
        return grid
    }

    private static func draw(_ row: FlowRow, on screenRow: Int, columns: FlowListColumns, into grid: inout ScreenGrid) {
        var base = CellStyle.plain
        if row.kind == .tunnel {
            if row.pinned { base.foreground = .magenta } else { base.dim = true }
        }
        // One column for three signs: the user's own mark wins over a replay's, which wins over a rule's.
        if row.marked || row.replayed || row.ruleApplied {
            var marker = base
            marker.foreground = row.marked ? .yellow : row.replayed ? .green : .cyan
            grid.put(row.marked ? "●" : row.replayed ? "↻" : "◆", row: screenRow, in: columns.marker, style: marker)
        }
        grid.put(row.id.map { String($0) } ?? "", row: screenRow, in: columns.id, style: base)
        if let time = columns.time { grid.put(row.time, row: screenRow, in: time, style: base) }
        var protocolStyle = base
        if row.protocolName == "h1" { protocolStyle.dim = true }  // the usual case: h2 and ws stand out
        grid.put(row.protocolName, row: screenRow, in: columns.proto, style: protocolStyle)
        grid.put(row.method, row: screenRow, in: columns.method, style: base)
        grid.put(row.status, row: screenRow, in: columns.status, style: statusStyle(row, base: base))
        if let proxy = columns.proxy { grid.put(row.proxy ?? "", row: screenRow, in: proxy, style: base) }
        grid.put(row.host, row: screenRow, in: columns.host, style: base, fromLeft: true)
        grid.put(row.path, row: screenRow, in: columns.path, style: base)
        if let type = columns.type { grid.put(row.contentType, row: screenRow, in: type, style: base) }
        grid.put(row.size, row: screenRow, in: columns.size, style: base)
        if let duration = columns.duration { grid.put(row.duration, row: screenRow, in: duration, style: base) }
    }

    /// 2xx green, 3xx cyan, 4xx yellow, 5xx red, a failed exchange red and bold.
    static func statusStyle(_ row: FlowRow, base: CellStyle) -> CellStyle {
        var style = base
        if row.error != nil {
            style.foreground = .red
            style.bold = true
            return style
        }
        guard row.kind == .http, let code = row.statusCode else { return style }
        style.foreground = statusColor(code) ?? style.foreground
        return style
    }

    /// 2xx green, 3xx cyan, 4xx yellow, 5xx red (the list and the detail view agree).
    static func statusColor(_ status: Int) -> TerminalColor? {
        switch status {
        case 200..<300: .green
        case 300..<400: .cyan
        case 400..<500: .yellow
        case 500..<600: .red
        default: nil
        }
    }

    private static func drawStatusLine(_ state: FlowListState, message: StatusMessage?, row: Int,
                                       into grid: inout ScreenGrid) {
        let position: String
        if state.totalRows == 0 {
            position = "no flows"
        } else if state.isFollowing {
            position = "following"
        } else {
            position = "row \(NumberText.grouped((state.selectedIndex ?? 0) + 1)) of \(NumberText.grouped(state.totalRows))"
        }
        let url = state.selectedIndex.flatMap { state.row(at: $0)?.url }.map { StatusMessage(.info, $0) }
        ScreenChrome.drawStatusLine(position: position, message: message ?? url, hint: "? help  q quit", row: row, into: &grid)
    }
}
