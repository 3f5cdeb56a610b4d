/// Where each column of the flow list sits for a given screen width.
///
/// Every column but HOST and PATH has a fixed width (ID as wide as the largest id shown). When
/// HOST and PATH would get less than `sharedMinimum` columns between them, columns give way in
/// this order: TYPE, DURATION, TIME; after that HOST and PATH shrink together (HOST takes two
/// fifths of their space, at most 30 columns, and its values are shortened from the left). Every
/// cell is written with its column's width as the limit, so a wide or long value can never push
/// the next column out of line. PROXY (which proxy captured the flow, in a shared capture) is
/// there only when rows name one, as wide as the longest name shown, at most `proxyMaximum`.
struct FlowListColumns: Equatable {
    /// One column: its title, first screen column, width, and whether values hug its right edge.
    struct Column: Equatable {
        var title: String
        var start: Int
        var width: Int
        var rightAligned: Bool
    }

    /// The optional columns, in the order they give way on narrow screens.
    enum Optional: CaseIterable { case type, duration, time }

    /// What HOST and PATH should have together before an optional column is shown.
    static let sharedMinimum = 40
    static let hostMaximum = 30
    static let proxyMaximum = 12

    let marker: Column
    let id: Column
    let time: Column?
    /// The protocol: `h1`, `h2`, `ws` (untitled: its values say what it is).
    let proto: Column
    let method: Column
    let status: Column
    /// Which proxy captured the flow; nil when no row shown names one (a local capture).
    let proxy: Column?
    let host: Column
    let path: Column
    let type: Column?
    let size: Column
    let duration: Column?

    /// - Parameter idDigits: the digits of the largest flow id on screen (the ID column is at least
    ///   as wide as its title).
    /// - Parameter proxyNameWidth: the columns of the longest proxy name on screen; 0 for none.
    init(screenWidth: Int, idDigits: Int = 2, proxyNameWidth: Int = 0) {
        let idWidth = max(2, idDigits)
        let proxyWidth = proxyNameWidth == 0 ? 0 : min(Self.proxyMaximum, max(5, proxyNameWidth))
        var dropped: Set<Optional> = []
        func shared() -> Int {
            // Everything but HOST, PATH and the space between them; those two share the rest.
            let fixed = 2 + (idWidth + 1) + (dropped.contains(.time) ? 0 : 12 + 1) + (2 + 1) + (7 + 1) + (6 + 1) + (1 + 9)
                + (proxyWidth == 0 ? 0 : proxyWidth + 1)
                + (dropped.contains(.type) ? 0 : 1 + 24) + (dropped.contains(.duration) ? 0 : 1 + 8)
            return screenWidth - fixed - 1
        }
        for column in Optional.allCases where shared() < Self.sharedMinimum {
            dropped.insert(column)
        }
        let space = max(0, shared())
        let hostWidth = min(Self.hostMaximum, space * 2 / 5)
        var next = 0
        func column(_ title: String, _ width: Int, right: Bool = false) -> Column {
            defer { next += width + 1 }
            return Column(title: title, start: next, width: width, rightAligned: right)
        }
        marker = column("", 1)
        id = column("ID", idWidth, right: true)
        time = dropped.contains(.time) ? nil : column("TIME", 12)
        proto = column("", 2)
        method = column("METHOD", 7)
        status = column("STATUS", 6)
        proxy = proxyWidth == 0 ? nil : column("PROXY", proxyWidth)
        host = column("HOST", hostWidth)
        path = column("PATH", space - hostWidth)
        type = dropped.contains(.type) ? nil : column("TYPE", 24)
        size = column("SIZE", 9, right: true)
        duration = dropped.contains(.duration) ? nil : column("DURATION", 8, right: true)
    }

    /// Left to right, as drawn.
    var all: [Column] {
        [marker, id, time, proto, method, status, proxy, host, path, type, size, duration].compactMap { $0 }
    }
}

extension ScreenGrid {
    /// Writes `text` into `column` on `row`, shortened with `…` when it does not fit (at the end,
    /// or at the start when `fromLeft`).
    mutating func put(_ text: String, row: Int, in column: FlowListColumns.Column, style: CellStyle,
                      fromLeft: Bool = false) {
        let shown = fromLeft ? ColumnText.fittedFromLeft(text, width: column.width) : ColumnText.fitted(text, width: column.width)
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

    /// `text` if it fits in `width` columns, else `…` followed by its longest suffix that fits:
    /// `…bucket.s3.amazonaws.com` keeps the part of a host name that tells hosts apart, and the port.
    static func fittedFromLeft(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        var kept = Substring()
        var used = 0
        var index = text.endIndex
        while index > text.startIndex {
            text.formIndex(before: &index)
            used += DisplayWidth.of(text[index])
            if used > width { return "…" + kept }
            if used <= width - 1 { kept = text[index...] }
        }
        return text
    }
}
