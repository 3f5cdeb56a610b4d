import ProxyModel
import TerminalUI
import XCTest

/// `ScreenGrid` and `DisplayWidth`: clipping, wide and combining characters, control bytes.
final class ScreenGridTests: XCTestCase {
    func testPutClipsAtTheLimitAndTheEdge() {
        var grid = ScreenGrid(width: 10, height: 2)
        XCTAssertEqual(grid.put("hello world", row: 0, column: 0, limit: 5), 5)
        XCTAssertEqual(grid.put("abcdef", row: 1, column: 7), 3)
        XCTAssertEqual(grid.text, "hello\n       abc")
        XCTAssertEqual(grid.put("x", row: 2, column: 0), 0, "outside the grid writes nothing")
        XCTAssertEqual(grid.put("x", row: 0, column: -1), 0)
    }

    /// Wide characters take two cells; one that would be cut in half becomes a space; combining
    /// marks stay with their base character; columns after them still line up.
    func testWideAndCombiningCharacters() {
        var grid = ScreenGrid(width: 8, height: 3)
        XCTAssertEqual(grid.put("日本x", row: 0, column: 0), 5)
        XCTAssertEqual(grid.put("ab日本", row: 1, column: 0, limit: 5), 5, "the second wide character does not fit")
        XCTAssertEqual(grid.put("e\u{301}|🎉|", row: 2, column: 0), 5)
        XCTAssertEqual(grid.rowText(0), "日本x   ")
        XCTAssertEqual(grid.rowText(1), "ab日    ")
        XCTAssertEqual(grid.rowText(2), "e\u{301}|🎉|   ")
        XCTAssertTrue(grid[0, 1].isContinuation)
        XCTAssertEqual(DisplayWidth.of("日本"), 4)
        XCTAssertEqual(DisplayWidth.of("e\u{301}"), 1)
        XCTAssertEqual(DisplayWidth.of("☃\u{FE0F}"), 2, "emoji presentation selector")
        XCTAssertEqual(DisplayWidth.of("a\u{200B}b"), 2, "zero-width space")
    }

    /// Overwriting half of a wide character leaves no orphan half behind.
    func testOverwritingHalfOfAWideCharacter() {
        var grid = ScreenGrid(width: 6, height: 1)
        grid.put("日本", row: 0, column: 0)
        grid.put("x", row: 0, column: 1)
        XCTAssertEqual(grid.rowText(0), " x本  ")
        grid.put("y", row: 0, column: 2)
        XCTAssertEqual(grid.rowText(0), " xy   ")
        XCTAssertFalse((0..<6).contains { grid[0, $0].isContinuation })
    }

    /// Control characters in captured data are shown as U+FFFD and never reach the terminal.
    func testControlCharactersAreReplaced() {
        var grid = ScreenGrid(width: 10, height: 1)
        grid.put("a\u{1B}[2Jb\n", row: 0, column: 0)
        XCTAssertEqual(grid.rowText(0), "a\u{FFFD}[2Jb\u{FFFD}   ")
    }

    /// C1 controls (a `CSI` some terminals honour), DEL and bidi overrides and isolates are
    /// shown as U+FFFD too: none reaches the terminal, none reorders the line.
    func testC1AndBidiCharactersAreReplaced() {
        var grid = ScreenGrid(width: 12, height: 1)
        grid.put("a\u{9B}2Jb\u{7F}\u{202E}c\u{2066}d\u{2069}", row: 0, column: 0)
        XCTAssertEqual(grid.rowText(0), "a\u{FFFD}2Jb\u{FFFD}\u{FFFD}c\u{FFFD}d\u{FFFD} ")
        XCTAssertFalse(grid.cells.contains { $0.text.unicodeScalars.contains(where: TerminalText.isUnsafe) })
    }

    func testFillAndRestyle() {
        var grid = ScreenGrid(width: 4, height: 1)
        grid.put("ab", row: 0, column: 0)
        grid.restyle(row: 0) { $0.reverse = true }
        XCTAssertEqual(grid[0, 0].text, "a")
        XCTAssertTrue(grid[0, 3].style.reverse)
        grid.fill(row: 0, from: 1, to: 3, style: CellStyle(background: .blue))
        XCTAssertEqual(grid.rowText(0), "a   ")
        XCTAssertEqual(grid[0, 2].style.background, .blue)
    }
}
