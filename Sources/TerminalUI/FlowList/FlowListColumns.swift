/// Where each column of the flow list sits for a given screen width.
///
/// Fixed widths for everything but HOST (up to 18, or 30 on wide screens, never more than half
/// of what is left) and PATH, which takes the rest; below 100 columns TYPE and DURATION are
/// dropped. Every cell is written with its column's width as the limit, so a wide or long value
/// can never push the next column out of line.
struct FlowListColumns: Equatable {
    /// One column: its title, first screen column, width, and whether values hug its right edge.
    struct Column: Equatable {
        var title: String
        var start: Int
        var width: Int
        var rightAligned: Bool
    }

    static let narrowLimit = 100

    let marker: Column
    let time: Column
    let method: Column
    let status: Column
    let host: Column
    let path: Column
    let type: Column?
    let size: Column
    let duration: Column?

    init(screenWidth: Int) {
        let wide = screenWidth >= Self.narrowLimit
        // Everything but HOST, PATH and the space between them; those two share the rest.
        let others = 2 + (12 + 1) + (7 + 1) + (6 + 1) + (1 + 9) + (wide ? (1 + 24) + (1 + 8) : 0)
        let shared = max(0, screenWidth - others - 1)
        let hostWidth = min(wide ? 30 : 18, shared / 2)
        let pathWidth = shared - hostWidth
        var next = 0
        func column(_ title: String, _ width: Int, right: Bool = false) -> Column {
            defer { next += width + 1 }
            return Column(title: title, start: next, width: width, rightAligned: right)
        }
        marker = column("", 1)
        time = column("TIME", 12)
        method = column("METHOD", 7)
        status = column("STATUS", 6)
        host = column("HOST", hostWidth)
        path = column("PATH", pathWidth)
        type = wide ? column("TYPE", 24) : nil
        size = column("SIZE", 9, right: true)
        duration = wide ? column("DURATION", 8, right: true) : nil
    }

    /// Left to right, as drawn.
    var all: [Column] {
        [marker, time, method, status, host, path, type, size, duration].compactMap { $0 }
    }
}

extension ScreenGrid {
    /// Writes `text` into `column` on `row`, shortened with `…` when it does not fit.
    mutating func put(_ text: String, row: Int, in column: FlowListColumns.Column, style: CellStyle) {
        let shown = ColumnText.fitted(text, width: column.width)
        let start = column.rightAligned ? column.start + column.width - DisplayWidth.of(shown) : column.start
        put(shown, row: row, column: start, limit: column.width, style: style)
    }
}

/// Shortening text to a number of terminal columns.
enum ColumnText {
    /// `text` if it fits in `width` columns, else its longest prefix that fits with `…` appended.
    static func fitted(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        // One pass that stops at the first character past the width: paths can be kilobytes long.
        var shortened = Substring()
        var used = 0
        var index = text.startIndex
        while index < text.endIndex {
            let columns = DisplayWidth.of(text[index])
            if used + columns > width { return shortened + "…" }
            used += columns
            text.formIndex(after: &index)
            if used <= width - 1 { shortened = text[..<index] }
        }
        return text
    }
}
