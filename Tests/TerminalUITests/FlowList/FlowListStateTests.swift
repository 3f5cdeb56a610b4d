import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowListState` over a table of a million rows: movement, paging, following the tail, resizing.
final class FlowListStateTests: XCTestCase {
    private let million = 1_000_000

    private func assertSelectionVisible(_ state: FlowListState, file: StaticString = #filePath, line: UInt = #line) {
        guard let selected = state.selectedIndex else { return XCTFail("nothing selected", file: file, line: line) }
        XCTAssertTrue(state.neededRange.contains(selected), "selection \(selected) outside \(state.neededRange)",
                      file: file, line: line)
    }

    func testStartsFollowingTheTail() {
        let state = FlowListState(totalRows: million, visibleRows: 20)
        XCTAssertTrue(state.isFollowing)
        XCTAssertEqual(state.selectedIndex, million - 1)
        XCTAssertEqual(state.top, million - 20)
        XCTAssertEqual(state.neededRange, (million - 20)..<million)
    }

    func testHomePageDownPageUpAndEnd() {
        var state = FlowListState(totalRows: million, visibleRows: 20)
        state.apply(.home)
        XCTAssertEqual(state.selectedIndex, 0)
        XCTAssertEqual(state.top, 0)
        XCTAssertFalse(state.isFollowing)

        state.apply(.moveDown)
        state.apply(.moveDown)
        state.apply(.pageDown)
        XCTAssertEqual(state.selectedIndex, 22)
        XCTAssertEqual(state.top, 20, "a page scrolls the view by a page too")
        assertSelectionVisible(state)

        state.apply(.pageUp)
        XCTAssertEqual(state.selectedIndex, 2)
        XCTAssertEqual(state.top, 0)
        state.apply(.pageUp)
        XCTAssertEqual(state.selectedIndex, 0)
        XCTAssertEqual(state.top, 0)
        state.apply(.moveUp)
        XCTAssertEqual(state.selectedIndex, 0, "stops at the first row")

        state.apply(.end)
        XCTAssertTrue(state.isFollowing)
        XCTAssertEqual(state.selectedIndex, million - 1)
        XCTAssertEqual(state.top, million - 20)
        state.apply(.pageDown)
        XCTAssertEqual(state.selectedIndex, million - 1, "stops at the last row")
        XCTAssertEqual(state.top, million - 20, "never scrolls past the last row")
        XCTAssertTrue(state.isFollowing, "staying on the last row keeps following")
    }

    func testMovingDownScrollsOneRowAtTheBottomEdge() {
        var state = FlowListState(totalRows: million, visibleRows: 5)
        state.apply(.home)
        for _ in 0..<5 { state.apply(.moveDown) }
        XCTAssertEqual(state.selectedIndex, 5)
        XCTAssertEqual(state.top, 1)
        assertSelectionVisible(state)
    }

    /// Moving up stops following; new rows then leave selection and view alone; `F` resumes.
    func testAppendedRowsWhileFollowingAndNot() {
        var state = FlowListState(totalRows: million, visibleRows: 20)
        state.rowsAppended(newTotal: million + 3)
        XCTAssertEqual(state.selectedIndex, million + 2)
        XCTAssertEqual(state.top, million + 3 - 20)

        state.apply(.moveUp)
        XCTAssertFalse(state.isFollowing)
        XCTAssertEqual(state.selectedIndex, million + 1)
        let top = state.top
        state.rowsAppended(newTotal: million + 50)
        XCTAssertEqual(state.selectedIndex, million + 1)
        XCTAssertEqual(state.top, top)
        XCTAssertFalse(state.isFollowing)

        state.apply(.follow)
        XCTAssertTrue(state.isFollowing)
        XCTAssertEqual(state.selectedIndex, million + 49)
        assertSelectionVisible(state)
        state.rowsAppended(newTotal: million + 60)
        XCTAssertEqual(state.selectedIndex, million + 59)
        assertSelectionVisible(state)
    }

    /// Rows deleted under a selection that is not following: it moves to the new last row.
    func testShrinkingClampsTheSelection() {
        var state = FlowListState(totalRows: 100, visibleRows: 10)
        state.apply(.pageUp)
        state.rowsAppended(newTotal: 50)
        XCTAssertEqual(state.selectedIndex, 49)
        assertSelectionVisible(state)
        state.rowsAppended(newTotal: 0)
        XCTAssertNil(state.selectedIndex)
        XCTAssertEqual(state.neededRange, 0..<0)
    }

    func testResizeKeepsTheSelectionVisible() {
        var state = FlowListState(totalRows: million, visibleRows: 40)
        state.apply(.home)
        for _ in 0..<30 { state.apply(.moveDown) }
        XCTAssertEqual(state.top, 0)
        state.resize(visibleRows: 10)
        XCTAssertEqual(state.selectedIndex, 30)
        XCTAssertEqual(state.top, 21)
        assertSelectionVisible(state)
        state.resize(visibleRows: 0)
        XCTAssertEqual(state.selectedIndex, 30)
        XCTAssertEqual(state.neededRange, 30..<30)
        state.resize(visibleRows: 50)
        assertSelectionVisible(state)

        var following = FlowListState(totalRows: million, visibleRows: 10)
        following.resize(visibleRows: 30)
        XCTAssertEqual(following.top, million - 30, "a taller list shows more of the tail")
    }

    func testEmptyAndSingleRowLists() {
        var empty = FlowListState(totalRows: 0, visibleRows: 20)
        for action in FlowListAction.allCases { empty.apply(action) }
        XCTAssertNil(empty.selectedIndex)
        XCTAssertEqual(empty.top, 0)
        XCTAssertEqual(empty.neededRange, 0..<0)
        XCTAssertFalse(empty.needsLoading)
        XCTAssertTrue(empty.isFollowing)
        empty.rowsAppended(newTotal: 1)
        XCTAssertEqual(empty.selectedIndex, 0, "the first row arrives and is followed")

        var single = FlowListState(totalRows: 1, visibleRows: 20)
        single.apply(.moveUp)
        single.apply(.home)
        XCTAssertEqual(single.selectedIndex, 0)
        XCTAssertTrue(single.isFollowing, "the only row is the last row")
        XCTAssertEqual(single.neededRange, 0..<1)
    }

    /// A short list shorter than the screen: the view starts at row 0 whatever happens.
    func testShortListNeverScrolls() {
        var state = FlowListState(totalRows: 5, visibleRows: 20)
        XCTAssertEqual(state.top, 0)
        state.apply(.pageDown)
        state.apply(.home)
        state.apply(.pageDown)
        XCTAssertEqual(state.selectedIndex, 4)
        XCTAssertEqual(state.top, 0)
    }

    /// The loaded window answers rows by absolute index and reports when the view moved past it.
    func testLoadedWindow() {
        var state = FlowListState(totalRows: million, visibleRows: 3)
        XCTAssertTrue(state.needsLoading)
        let rows = (0..<3).map { index -> FlowRow in
            var row = FlowRow(Flow(), timeZone: TimeZone(identifier: "UTC")!)
            row.id = Int64(million - 3 + index)
            return row
        }
        state.load(rows, at: million - 3)
        XCTAssertFalse(state.needsLoading)
        XCTAssertEqual(state.row(at: million - 1)?.id, Int64(million - 1))
        XCTAssertNil(state.row(at: million - 4))
        state.apply(.moveUp)
        XCTAssertFalse(state.needsLoading, "still inside the window")
        state.apply(.pageUp)
        XCTAssertTrue(state.needsLoading)
    }
}

/// Rows arriving at the front (a filtered view's older flows) and jumps.
final class FlowListStatePrependTests: XCTestCase {
    func testPrependKeepsTheSelectedRow() {
        var state = FlowListState(totalRows: 100, visibleRows: 10)
        state.apply(.pageUp)
        let selected = state.selectedIndex!
        let top = state.top
        state.rowsPrepended(50)
        XCTAssertEqual(state.totalRows, 150)
        XCTAssertEqual(state.selectedIndex, selected + 50)
        XCTAssertEqual(state.top, top + 50)
        XCTAssertFalse(state.isFollowing)
    }

    func testPrependWhileFollowingStaysOnTheTail() {
        var state = FlowListState(totalRows: 5, visibleRows: 10)
        state.rowsPrepended(20)
        XCTAssertEqual(state.selectedIndex, 24)
        XCTAssertEqual(state.top, 15)
        XCTAssertTrue(state.isFollowing)
    }

    func testSelectJumpsAndStopsFollowing() {
        var state = FlowListState(totalRows: 1_000_000, visibleRows: 20)
        state.select(500_000)
        XCTAssertEqual(state.selectedIndex, 500_000)
        XCTAssertTrue(state.neededRange.contains(500_000))
        XCTAssertFalse(state.isFollowing)
        state.select(2_000_000)
        XCTAssertEqual(state.selectedIndex, 999_999, "clamped")
        var empty = FlowListState()
        empty.select(3)
        XCTAssertNil(empty.selectedIndex)
    }
}
