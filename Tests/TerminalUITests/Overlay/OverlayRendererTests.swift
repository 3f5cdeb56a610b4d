import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// The prompt, the yes/no question, the help screen and the pins view, rendered into fixed grids.
final class OverlayRendererTests: XCTestCase {
    func testPromptShowsTheCursorAndTheError() {
        var grid = ScreenGrid(width: 40, height: 4)
        grid.put("flow row", row: 2, column: 0)
        var editor = LineEditor("~c 200 & (")
        editor.moveCursor(to: 9)
        PromptRenderer.draw(label: "filter:", editor: editor, error: "expected an expression at column 11", into: &grid)
        XCTAssertEqual(grid.rowText(3).trimmingCharacters(in: .whitespaces), "filter: ~c 200 & (")
        XCTAssertTrue(grid[3, 8 + 9].style.reverse, "the cursor cell")
        XCTAssertFalse(grid[3, 8 + 8].style.reverse)
        XCTAssertTrue(grid.rowText(2).hasPrefix("expected an expression at column 11"))
        XCTAssertEqual(grid[2, 0].style.foreground, .red)
    }

    /// A line longer than the screen scrolls so the cursor stays visible.
    func testLongPromptScrollsToTheCursor() {
        var grid = ScreenGrid(width: 20, height: 2)
        let editor = LineEditor(String(repeating: "a", count: 30) + "XYZ")
        PromptRenderer.draw(label: "filter:", editor: editor, into: &grid)
        let row = grid.rowText(1)
        XCTAssertTrue(row.contains("XYZ"), row)
        XCTAssertTrue(grid[1, 19].style.reverse || grid[1, 18].style.reverse, "cursor at the end, on screen")
    }

    func testConfirm() {
        var grid = ScreenGrid(width: 50, height: 3)
        ConfirmRenderer.draw(question: "Delete all 3 flows from the capture?", into: &grid)
        XCTAssertEqual(grid.text.split(separator: "\n").last, "Delete all 3 flows from the capture?  y/n")
        XCTAssertTrue(grid[2, 49].style.reverse)
    }

    func testHelpListsEveryBindingOnce() {
        let lines = HelpRenderer.lines(for: KeyBindings.standard, title: "Flow list")
        XCTAssertTrue(lines.contains { $0.contains("k, Up, wheel up") && $0.contains("select the previous flow") })
        XCTAssertEqual(lines.filter { $0.contains("delete all flows") }.count, 1)
        XCTAssertTrue(lines.contains { $0.contains("~rule rule name") }, "the filter operators include ~rule")
        let grid = HelpRenderer.render(lines: lines, scroll: 2, size: ScreenSize(width: 60, height: 10))
        XCTAssertEqual(grid.rowText(1).trimmingCharacters(in: .whitespaces), lines[2].trimmingCharacters(in: .whitespaces))
        XCTAssertTrue(grid.text.hasSuffix("j/k scroll  any other key closes"))
    }

    func testPinsSnapshot() {
        let seen = Date(timeIntervalSince1970: 1_795_000_000)
        var state = PinsViewState(pins: [
            PinnedDomain(host: "bank.test", reason: "client rejected the certificate (unknown_ca alert)", evidence: "",
                         firstSeen: seen, lastSeen: seen, count: 3,
                         client: ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")),
            PinnedDomain(host: "pay.example.com", reason: "client closed during the handshake", evidence: "",
                         firstSeen: seen, lastSeen: seen.addingTimeInterval(60), count: 1),
        ])
        state.move(by: 1)
        let grid = PinsRenderer.render(state, ttl: 7 * 86_400, timeZone: TimeZone(identifier: "UTC")!,
                                       size: ScreenSize(width: 80, height: 6), message: StatusMessage(.info, "removed"))
        XCTAssertEqual(grid.text, """
            ProxyApp  pinned domains: 2 (passed through without decryption)
            HOST                  CLIENT                REASON              EXPIRES
            bank.test             127.0.0.1 t131513h2…  client rejected t…  2026-11-25 11:06
            pay.example.com       any client            client closed dur…  2026-11-25 11:07

            removed                                                     d remove pin  q back
            """)
        XCTAssertTrue(grid[3, 0].style.reverse, "the selected pin")
        let wide = PinsRenderer.render(state, ttl: 7 * 86_400, timeZone: TimeZone(identifier: "UTC")!,
                                       size: ScreenSize(width: 200, height: 50), message: nil).text
        XCTAssertTrue(wide.contains("\nbank.test                                 127.0.0.1 t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb     "
                                    + "client rejected the certificate (unknown_ca alert) (3×, last 11:06:40.000)"), wide)
        XCTAssertTrue(wide.contains("\npay.example.com                           any client      "), wide)
        XCTAssertFalse(grid[2, 0].style.reverse)
        state.replace([state.pins[1]])
        XCTAssertEqual(state.selected?.host, "pay.example.com", "the selection follows its host")
        state.replace([])
        XCTAssertNil(state.selectedIndex)
    }
}
