import TerminalUI
import XCTest

/// `TextPageState`, `TextPageRenderer` and `EventLogPage`: scrolling that follows the end of a
/// log, wrapping, and the event log's screens.
final class TextPageTests: XCTestCase {
    private let path = "/home/ada/.proxyapp/proxyapp.log"

    private func log(_ count: Int) -> [String] {
        (1...count).map { "2026-11-25T17:05:\(String(format: "%02d", $0 % 60))+0000 notice proxyapp : line \($0)" }
    }

    private func render(_ content: EventLogPage.Content, _ state: TextPageState, width: Int, height: Int) -> String {
        TextPageRenderer.render(title: EventLogPage.title(path: path), lines: EventLogPage.lines(content, path: path),
                                state: state, hint: EventLogPage.hint, size: ScreenSize(width: width, height: height)).text
    }

    /// At the end the newest lines are at the bottom (a long one wrapped); scrolling up pins a
    /// line, scrolling back down to the end follows again.
    func testEventLog80x24() {
        var lines = log(30)
        lines.append("2026-11-25T17:06:00+0000 rules: /home/ada/.proxyapp/rules.yml not reloaded, the previous rules stay in force: line 4: unknown key 'blok'")
        let content = EventLogPage.Content.lines(lines, truncated: true)
        XCTAssertEqual(render(content, TextPageState(atEnd: true), width: 80, height: 24), """
            ProxyApp  event log  /home/ada/.proxyapp/proxyapp.log
            2026-11-25T17:05:11+0000 notice proxyapp : line 11
            2026-11-25T17:05:12+0000 notice proxyapp : line 12
            2026-11-25T17:05:13+0000 notice proxyapp : line 13
            2026-11-25T17:05:14+0000 notice proxyapp : line 14
            2026-11-25T17:05:15+0000 notice proxyapp : line 15
            2026-11-25T17:05:16+0000 notice proxyapp : line 16
            2026-11-25T17:05:17+0000 notice proxyapp : line 17
            2026-11-25T17:05:18+0000 notice proxyapp : line 18
            2026-11-25T17:05:19+0000 notice proxyapp : line 19
            2026-11-25T17:05:20+0000 notice proxyapp : line 20
            2026-11-25T17:05:21+0000 notice proxyapp : line 21
            2026-11-25T17:05:22+0000 notice proxyapp : line 22
            2026-11-25T17:05:23+0000 notice proxyapp : line 23
            2026-11-25T17:05:24+0000 notice proxyapp : line 24
            2026-11-25T17:05:25+0000 notice proxyapp : line 25
            2026-11-25T17:05:26+0000 notice proxyapp : line 26
            2026-11-25T17:05:27+0000 notice proxyapp : line 27
            2026-11-25T17:05:28+0000 notice proxyapp : line 28
            2026-11-25T17:05:29+0000 notice proxyapp : line 29
            2026-11-25T17:05:30+0000 notice proxyapp : line 30
            2026-11-25T17:06:00+0000 rules: /home/ada/.proxyapp/rules.yml not reloaded, the
              previous rules stay in force: line 4: unknown key 'blok'
            end (32 lines)                           j/k scroll  G end  any other key closes
            """)

        var state = TextPageState(atEnd: true)
        state.apply(.up, lineCount: 32, rows: 22)
        XCTAssertEqual(state.top, 9)
        let pinned = render(content, state, width: 80, height: 24)
        XCTAssertTrue(pinned.hasSuffix("line 10 of 32                            j/k scroll  G end  any other key closes"), pinned)
        XCTAssertTrue(pinned.contains("line 9\n"), "one line further up:\n\(pinned)")
        state.apply(.start, lineCount: 32, rows: 22)
        XCTAssertEqual(state.top, 0)
        XCTAssertTrue(render(content, state, width: 80, height: 24).contains("(older lines left out: open the file to see them all)"))
        state.apply(.pageDown, lineCount: 32, rows: 22)
        XCTAssertNil(state.top, "back at the end: following again")
        state.apply(.up, lineCount: 32, rows: 22)
        state.apply(.end, lineCount: 32, rows: 22)
        XCTAssertNil(state.top)
    }

    func testEventLog200x50AndEmptyStates() {
        let screen = render(.lines(log(3), truncated: false), TextPageState(atEnd: true), width: 200, height: 50)
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(rows.count, 50)
        XCTAssertEqual(rows[1], "2026-11-25T17:05:01+0000 notice proxyapp : line 1", "a short log starts at the top")
        XCTAssertEqual(rows[3], "2026-11-25T17:05:03+0000 notice proxyapp : line 3")
        XCTAssertTrue(rows[49].hasPrefix("end (3 lines)"))

        XCTAssertTrue(render(.missing, TextPageState(atEnd: true), width: 80, height: 6)
            .contains("No log lines yet: \(path) does not exist."))
        XCTAssertTrue(render(.failed("Permission denied"), TextPageState(atEnd: true), width: 200, height: 6)
            .contains("Cannot read \(path): Permission denied"))
        XCTAssertTrue(render(.lines([], truncated: false), TextPageState(atEnd: true), width: 80, height: 6)
            .contains("The log is empty"))
        XCTAssertTrue(render(.loading, TextPageState(atEnd: true), width: 80, height: 6).contains("reading \(path)…"))
        XCTAssertEqual(EventLogPage.lines(.missing, path: ""), ["This view was started without a log file."])
        XCTAssertEqual(EventLogPage.lines(.lines(["a"], truncated: false), path: path, proxyElsewhere: true),
                       ["(a proxy started with --headless prints its log lines on its own output, not here)", "a"])
    }

    /// Control characters and escape sequences in a log line never reach the terminal raw.
    func testHostileLogLinesAndTinyScreens() {
        let content = EventLogPage.Content.lines(["evil \u{1B}[2J\u{1B}]52;c;AAAA\u{07} line", String(repeating: "日本", count: 200)],
                                                 truncated: false)
        let grid = TextPageRenderer.render(title: "t", lines: EventLogPage.lines(content, path: path),
                                           state: TextPageState(atEnd: true), hint: "", size: ScreenSize(width: 30, height: 40))
        XCTAssertFalse(grid.cells.contains { $0.text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 } })
        XCTAssertTrue(grid.rowText(1).hasPrefix("evil �[2J�]52;c;AAAA� line"))
        XCTAssertEqual(grid.rowText(2), String(repeating: "日本", count: 7) + "日", "wide characters fill the row whole")
        XCTAssertEqual(grid.rowText(3), "  本" + String(repeating: "日本", count: 6) + "日", "the rest wraps, indented")
        for (width, height) in [(0, 0), (1, 1), (5, 2), (9, 3)] {
            let tiny = TextPageRenderer.render(title: "t", lines: EventLogPage.lines(content, path: path),
                                               state: TextPageState(atEnd: true), hint: "h", size: ScreenSize(width: width, height: height))
            XCTAssertEqual(tiny.width, width)
        }
    }

    func testKeysThatScroll() {
        XCTAssertEqual(TextPageState.move(for: .character("j")), .down)
        XCTAssertEqual(TextPageState.move(for: .up), .up)
        XCTAssertEqual(TextPageState.move(for: .character("G")), .end)
        XCTAssertEqual(TextPageState.move(for: .home), .start)
        XCTAssertEqual(TextPageState.move(for: .pageDown), .pageDown)
        XCTAssertNil(TextPageState.move(for: .character("q")))
        XCTAssertNil(TextPageState.move(for: .character("E")))
    }
}
