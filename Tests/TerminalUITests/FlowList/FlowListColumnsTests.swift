@testable import TerminalUI
import XCTest

/// `FlowListColumns` and `ColumnText`: the layout fills the width exactly, and shortening counts
/// terminal columns, not characters.
final class FlowListColumnsTests: XCTestCase {
    func testNarrowAndWideLayoutsFillTheScreen() {
        for width in [41, 80, 99, 100, 104, 200, 333] {
            let columns = FlowListColumns(screenWidth: width)
            let last = columns.all.last!
            XCTAssertEqual(last.start + last.width, width, "width \(width)")
            XCTAssertEqual(columns.type == nil, width < 100)
            XCTAssertEqual(columns.duration == nil, width < 100)
            for (left, right) in zip(columns.all, columns.all.dropFirst()) {
                XCTAssertEqual(left.start + left.width + 1, right.start, "one space between \(left.title) and \(right.title)")
            }
        }
        XCTAssertEqual(FlowListColumns(screenWidth: 80).host.width, 18)
        XCTAssertEqual(FlowListColumns(screenWidth: 80).path.width, 21)
        XCTAssertEqual(FlowListColumns(screenWidth: 100).host.width, 12, "just wide enough: host and path share")
        XCTAssertEqual(FlowListColumns(screenWidth: 100).path.width, 13)
        XCTAssertEqual(FlowListColumns(screenWidth: 200).host.width, 30)
        XCTAssertEqual(FlowListColumns(screenWidth: 200).path.width, 95)
        XCTAssertEqual(FlowListColumns(screenWidth: 40).path.width, 0, "too narrow: PATH shrinks to nothing")
    }

    func testFittedCountsDisplayColumns() {
        XCTAssertEqual(ColumnText.fitted("abc", width: 3), "abc")
        XCTAssertEqual(ColumnText.fitted("abcd", width: 3), "ab…")
        XCTAssertEqual(ColumnText.fitted("日本語", width: 6), "日本語")
        XCTAssertEqual(ColumnText.fitted("日本語", width: 5), "日本…")
        XCTAssertEqual(ColumnText.fitted("日本語", width: 4), "日…", "a wide character never straddles the …")
        XCTAssertEqual(ColumnText.fitted("cafe\u{301}s", width: 5), "cafe\u{301}s", "combining marks take no column")
        XCTAssertEqual(ColumnText.fitted("cafe\u{301}s!", width: 5), "cafe\u{301}…")
        XCTAssertEqual(ColumnText.fitted("abc", width: 0), "")
        XCTAssertEqual(ColumnText.fitted("abc", width: 1), "…")
    }

    /// A right-aligned value with wide characters still ends at the column's right edge.
    func testRightAlignedWideText() {
        let column = FlowListColumns.Column(title: "SIZE", start: 2, width: 6, rightAligned: true)
        var grid = ScreenGrid(width: 10, height: 1)
        grid.put("日本", row: 0, in: column, style: .plain)
        XCTAssertEqual(grid.rowText(0), "    日本  ")
    }
}
