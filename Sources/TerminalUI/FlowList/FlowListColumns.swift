/// Where each column of the flow list sits for a given screen width.
///
/// Fixed widths for everything but PATH, which takes what is left; below 100 columns TYPE and
/// DURATION are dropped so host and path keep room. Every cell is written with its column's
/// width as the limit, so a wide or long value can never push the next column out of line.
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
        let hostWidth = wide ? 30 : 18
        let fixed = 2 + (12 + 1) + (7 + 1) + (6 + 1) + (hostWidth + 1) + (1 + 9) + (wide ? (1 + 24) + (1 + 8) : 0)
        let pathWidth = max(0, screenWidth - fixed)
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
