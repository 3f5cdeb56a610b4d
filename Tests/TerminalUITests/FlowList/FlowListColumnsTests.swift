@testable import TerminalUI
import XCTest

/// `FlowListColumns` and `ColumnText`: the layout fills the width exactly, and shortening counts
/// terminal columns, not characters.
final class FlowListColumnsTests: XCTestCase {
    func testLayoutsFillTheScreenAndColumnsGiveWayInOrder() {
        for width in [41, 80, 86, 87, 95, 96, 102, 103, 120, 121, 200, 333] {
            let columns = FlowListColumns(screenWidth: width)
            let last = columns.all.last!
            XCTAssertEqual(last.start + last.width, width, "width \(width)")
            // TYPE goes first, then DURATION, then TIME.
            XCTAssertEqual(columns.type == nil, width < 121, "TYPE at \(width)")
            XCTAssertEqual(columns.duration == nil, width < 96, "DURATION at \(width)")
            XCTAssertEqual(columns.time == nil, width < 87, "TIME at \(width)")
            for (left, right) in zip(columns.all, columns.all.dropFirst()) {
                XCTAssertEqual(left.start + left.width + 1, right.start, "one space between \(left.title) and \(right.title)")
            }
            XCTAssertEqual(columns.all.map(\.title).prefix(2), ["", "ID"])
        }
        XCTAssertEqual(FlowListColumns(screenWidth: 80).host.width, 18)
        XCTAssertEqual(FlowListColumns(screenWidth: 80).path.width, 28, "at 80 columns TIME gave way to PATH")
        XCTAssertEqual(FlowListColumns(screenWidth: 80).proto.width, 2, "the protocol stays at 80 columns")
        XCTAssertEqual(FlowListColumns(screenWidth: 100).host.width, 17)
        XCTAssertEqual(FlowListColumns(screenWidth: 100).path.width, 27)
        XCTAssertEqual(FlowListColumns(screenWidth: 200).host.width, 30)
        XCTAssertEqual(FlowListColumns(screenWidth: 200).path.width, 89)
        XCTAssertEqual(FlowListColumns(screenWidth: 40).host.width, 2, "then HOST and PATH shrink")
        XCTAssertEqual(FlowListColumns(screenWidth: 40).path.width, 4)
        XCTAssertEqual(FlowListColumns(screenWidth: 20).path.width, 0, "too narrow: PATH shrinks to nothing")
    }

    /// The ID column is as wide as the largest id, and takes its columns from HOST and PATH.
    func testProxyColumnOnlyForASharedCapture() {
        XCTAssertNil(FlowListColumns(screenWidth: 80).proxy, "a local capture has no PROXY column")
        XCTAssertEqual(FlowListColumns(screenWidth: 80, proxyNameWidth: 2).proxy?.width, 5, "as wide as its title")
        XCTAssertEqual(FlowListColumns(screenWidth: 80, proxyNameWidth: 40).proxy?.width, 12, "at most 12")
        let shared = FlowListColumns(screenWidth: 80, proxyNameWidth: 8)
        XCTAssertEqual(shared.host.width + shared.path.width, FlowListColumns(screenWidth: 80).host.width
                       + FlowListColumns(screenWidth: 80).path.width - 9, "HOST and PATH make room")
    }

    func testIDColumnWidth() {
        XCTAssertEqual(FlowListColumns(screenWidth: 80, idDigits: 1).id.width, 2, "never narrower than its title")
        let wide = FlowListColumns(screenWidth: 80, idDigits: 7)
        XCTAssertEqual(wide.id.width, 7)
        XCTAssertTrue(wide.id.rightAligned)
        XCTAssertEqual(wide.host.width + wide.path.width, 46 - 5)
        XCTAssertEqual(wide.all.last.map { $0.start + $0.width }, 80)
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

    /// Hosts are shortened from the left: the end of a name (and the port) tells hosts apart.
    func testFittedFromLeftKeepsTheEnd() {
        XCTAssertEqual(ColumnText.fittedFromLeft("a.example.com", width: 13), "a.example.com")
        XCTAssertEqual(ColumnText.fittedFromLeft("bucket.s3.amazonaws.com", width: 12), "…azonaws.com")
        XCTAssertEqual(ColumnText.fittedFromLeft("localhost:19281", width: 10), "…ost:19281")
        XCTAssertEqual(ColumnText.fittedFromLeft("例え.テスト", width: 6), "…スト", "a wide character never straddles the …")
        XCTAssertEqual(ColumnText.fittedFromLeft("me\u{301}nu.test", width: 9), "me\u{301}nu.test", "combining marks take no column")
        XCTAssertEqual(ColumnText.fittedFromLeft("abc", width: 1), "…")
        XCTAssertEqual(ColumnText.fittedFromLeft("abc", width: 0), "")
        XCTAssertEqual(ColumnText.fittedFromLeft("", width: 3), "")
    }

    /// A right-aligned value with wide characters still ends at the column's right edge.
    func testRightAlignedWideText() {
        let column = FlowListColumns.Column(title: "SIZE", start: 2, width: 6, rightAligned: true)
        var grid = ScreenGrid(width: 10, height: 1)
        grid.put("日本", row: 0, in: column, style: .plain)
        XCTAssertEqual(grid.rowText(0), "    日本  ")
    }
}
