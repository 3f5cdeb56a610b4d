import SeededRandom
import XCTest
@testable import TerminalUI

final class ScreenDiffTests: XCTestCase {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func grid(_ rows: [String], width: Int) -> ScreenGrid {
        var grid = ScreenGrid(width: width, height: rows.count)
        for (row, line) in rows.enumerated() { grid.put(line, row: row, column: 0) }
        return grid
    }

    func testFullDrawClearsAndWritesOnlyNonBlankRuns() {
        let next = grid(["ab", " c"], width: 3)
        XCTAssertEqual(text(ScreenDiff.bytes(from: nil, to: next)),
                       "\u{1B}[0m\u{1B}[2J\u{1B}[1;1Hab\u{1B}[2;2Hc\u{1B}[0m")
    }

    func testUnchangedGridGivesNoBytes() {
        let same = grid(["abc", "def"], width: 4)
        XCTAssertEqual(ScreenDiff.bytes(from: same, to: same), [])
    }

    func testOneChangedCell() {
        let previous = grid(["abc", "def"], width: 3)
        let next = grid(["abc", "dXf"], width: 3)
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)), "\u{1B}[2;2HX\u{1B}[0m")
    }

    func testChangedRunIsOneCursorMoveAndGapsMoveAgain() {
        let previous = grid(["abcdefgh"], width: 8)
        let next = grid(["aXYZefQh"], width: 8)
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)), "\u{1B}[1;2HXYZ\u{1B}[1;7HQ\u{1B}[0m")
    }

    func testStyleChangeSendsSGROnlyWhenTheStyleChanges() {
        let previous = grid(["abcd"], width: 4)
        var next = previous
        next.restyle(row: 0, from: 1, to: 3) { $0 = CellStyle(foreground: .red, background: .brightBlue, bold: true, reverse: true) }
        next.restyle(row: 0, from: 3, to: 4) { $0 = CellStyle(foreground: .brightWhite, dim: true, underline: true) }
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)),
                       "\u{1B}[1;2H\u{1B}[0;1;7;31;104mbc\u{1B}[0;2;4;97md\u{1B}[0m")
    }

    func testWideCharacterIsWrittenOnceAndCoversItsContinuation() {
        let previous = grid(["abcd"], width: 4)
        let next = grid(["a界d"], width: 4)
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)), "\u{1B}[1;2H界\u{1B}[0m")
    }

    func testChangedContinuationRewritesFromItsWideCharacter() {
        let previous = grid(["a界d"], width: 4)
        var next = previous
        next.restyle(row: 0, from: 2, to: 3) { $0.bold = true }  // only the right half's cell differs
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)), "\u{1B}[1;2H界\u{1B}[0m")
    }

    func testResizeRedrawsEverything() {
        let previous = grid(["ab"], width: 2)
        let next = grid(["ab", "c"], width: 2)
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)),
                       "\u{1B}[0m\u{1B}[2J\u{1B}[1;1Hab\u{1B}[2;1Hc\u{1B}[0m")
    }

    func testCursorAtTheRightEdgeIsRepositionedOnTheNextRow() {
        let previous = grid(["ab", "cd"], width: 2)
        let next = grid(["aX", "Yd"], width: 2)
        XCTAssertEqual(text(ScreenDiff.bytes(from: previous, to: next)), "\u{1B}[1;2HX\u{1B}[2;1HY\u{1B}[0m")
    }

    /// Random edits replayed on a model terminal: the screen must end up equal to the new grid.
    func testRandomMutationsRoundTripThroughAModelTerminal() {
        var random = SeededRandom(seed: 0x5EED)
        let pieces = ["a", "Zq", "界", "é", "e\u{301}", "🙂", "日本", "x界y", "  ", "-", "ab界cd"]
        let styles = [CellStyle.plain, CellStyle(foreground: .green), CellStyle(background: .brightRed, bold: true),
                      CellStyle(reverse: true), CellStyle(foreground: .brightCyan, dim: true, underline: true)]
        var previous = ScreenGrid(width: 13, height: 5)
        var screen = ANSIScreenModel(width: 13, height: 5, filler: Cell(text: "#"))
        screen.apply(ScreenDiff.bytes(from: nil, to: previous))
        XCTAssertTrue(screen.matches(previous))
        for step in 0..<200 {
            var next = previous
            if step % 50 == 49 { next = ScreenGrid(width: 9 + Int.random(in: 0...8, using: &random), height: 4) }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let row = Int.random(in: 0..<next.height, using: &random)
                let column = Int.random(in: 0..<next.width, using: &random)
                let style = styles.randomElement(using: &random)!
                switch Int.random(in: 0...2, using: &random) {
                case 0: next.put(pieces.randomElement(using: &random)!, row: row, column: column, style: style)
                case 1: next.fill(row: row, from: column, to: column + Int.random(in: 1...4, using: &random), style: style)
                default: next.restyle(row: row, from: column, to: column + 3) { $0 = style }
                }
            }
            if next.width != previous.width { screen = ANSIScreenModel(width: next.width, height: next.height, filler: Cell(text: "#")) }
            let diff = ScreenDiff.bytes(from: previous, to: next)
            screen.apply(diff)
            XCTAssertTrue(screen.matches(next), "step \(step): \(String(decoding: diff, as: UTF8.self).debugDescription)\nscreen \(screen.cells.map { $0.text.isEmpty ? "_" : $0.text }.joined())\nwanted \(next.cells.map { $0.text.isEmpty ? "_" : $0.text }.joined())\nbefore \(previous.cells.map { $0.text.isEmpty ? "_" : $0.text }.joined())")
            if !screen.matches(next) { return }
            previous = next
        }
    }
}
