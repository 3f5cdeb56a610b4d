import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// Long lines in the detail view wrap by default (notes, errors, headers, text and JSON bodies;
/// not hex), `w` toggles, Left/Right unwrap, and scrolling goes row by row through a wrapped line.
final class DetailWrapTests: XCTestCase {
    private static let longError = "upstream TLS handshake failed: the server's certificate for down.test was issued by an authority this machine does not trust (self-signed certificate in chain)"
    private static let longNote = "this client does not trust the ProxyApp CA yet: install it from http://proxyapp.cert/ and try again; nothing was pinned"

    private var failed: Flow {
        var flow = DetailFixtures.failed
        flow.error = Self.longError
        flow.note = Self.longNote
        return flow
    }

    private func render(_ flow: Flow, _ state: FlowDetailState, width: Int, height: Int) -> [String] {
        DetailFixtures.render(DetailFixtures.content(flow), state, width: width, height: height).text
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The rows from the one starting with `prefix`, trailing blanks trimmed, until `count` rows.
    private func rows(startingWith prefix: String, count: Int, in lines: [String]) -> [String] {
        guard let first = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else { return [] }
        return lines[first..<min(lines.count, first + count)].map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }
    }

    func testAnErrorWrapsAt80x24AndFitsAt200x50() {
        let narrow = render(failed, FlowDetailState(tab: .response), width: 80, height: 24)
        XCTAssertEqual(rows(startingWith: "No response:", count: 3, in: narrow), [
            "No response: upstream TLS handshake failed: the server's certificate for down.te",
            "st was issued by an authority this machine does not trust (self-signed certifica",
            "te in chain)",
        ])
        XCTAssertEqual(narrow.last?.hasPrefix("line 1 of 2"), true, "two lines (the error, then the note), five rows:\n\(narrow.joined(separator: "\n"))")
        let wide = render(failed, FlowDetailState(tab: .response), width: 200, height: 50)
        XCTAssertEqual(rows(startingWith: "No response:", count: 3, in: wide),
                       ["No response: \(Self.longError)", "Note: \(Self.longNote)", ""])
    }

    func testTheNoteAndErrorOfTheTimingPageWrap() {
        for (width, height) in [(80, 24), (200, 50)] {
            let lines = render(failed, FlowDetailState(tab: .timing), width: width, height: height)
            // Rows padded back to the width (the text drops trailing blanks), then read as one.
            let text = lines.map { $0.padding(toLength: width, withPad: " ", startingAt: 0) }.joined()
            XCTAssertTrue(text.contains(Self.longNote), "the whole note at \(width)×\(height):\n\(lines.joined(separator: "\n"))")
            XCTAssertTrue(text.contains(Self.longError), "the whole error at \(width)×\(height)")
            XCTAssertTrue(lines.allSatisfy { $0.count <= width })
        }
    }

    /// `w` cuts lines at the edge again (as before wrapping existed) and brings wrapping back.
    func testWTogglesWrapping() {
        let content = DetailFixtures.content(failed)
        let size = ScreenSize(width: 80, height: 24)
        var state = FlowDetailState(tab: .response)
        XCTAssertTrue(state.wraps)
        state.apply(.toggleWrap, content: content, size: size)
        XCTAssertFalse(state.wraps)
        let cut = render(failed, state, width: 80, height: 24)
        XCTAssertEqual(rows(startingWith: "No response:", count: 3, in: cut),
                       ["No response: upstream TLS handshake failed: the server's certificate for down.te",
                        "Note: this client does not trust the ProxyApp CA yet: install it from http://pro", ""])
        state.apply(.toggleWrap, content: content, size: size)
        XCTAssertTrue(state.wraps)
        XCTAssertEqual(rows(startingWith: "No response:", count: 3, in: render(failed, state, width: 80, height: 24)).count, 3)
    }

    /// Minified JSON in the text view wraps; the same body in hex keeps its layout, one row a line.
    func testTextBodiesWrapAndHexDoesNot() {
        let content = DetailFixtures.content(DetailFixtures.login)
        let size = ScreenSize(width: 60, height: 24)
        var state = FlowDetailState()
        state.apply(.cycleBodyView, content: content, size: size)  // text
        var lines = DetailFixtures.render(content, state, width: 60, height: 24).text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("{\"id\":42") || $0.hasPrefix("\"roles\"") || $0.contains("\"manager\":null}") }.count, 2,
                       lines.joined(separator: "\n"))
        XCTAssertTrue(lines.joined().contains(DetailFixtures.json), "the whole body is on screen")
        state.apply(.cycleBodyView, content: content, size: size)  // hex
        lines = DetailFixtures.render(content, state, width: 60, height: 24).text.split(separator: "\n").map(String.init)
        let first = try? XCTUnwrap(lines.firstIndex { $0.hasPrefix("00000000  7b 22 69 64") })
        XCTAssertEqual(first.map { lines[$0 + 1].hasPrefix("00000010") }, true, "a hex row is cut, not wrapped:\n\(lines.joined(separator: "\n"))")
    }

    /// Down and Up step through the rows of a wrapped line; End shows the last row at the bottom.
    func testScrollingByRowsThroughAWrappedLine() {
        // Line 9 of the page (body line 5) is 200 columns: 3 rows at 80.
        let content = FlowDetailStateTests.textContent(lines: 30, wideLine: 200)
        let size = ScreenSize(width: 80, height: 24)
        var state = FlowDetailState()
        for _ in 0..<9 { state.apply(.scrollDown, content: content, size: size) }
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 9))
        state.apply(.scrollDown, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 9, row: 1))
        let screen = DetailFixtures.render(content, state, width: 80, height: 24).text.split(separator: "\n").map(String.init)
        XCTAssertEqual(screen[2], String(repeating: "w", count: 80), "the second row of the wide line on top")
        XCTAssertEqual(screen[3], String(repeating: "w", count: 40))
        XCTAssertEqual(screen[4], "line 6")
        state.apply(.scrollDown, content: content, size: size)
        state.apply(.scrollDown, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 10))
        state.apply(.scrollUp, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 9, row: 2))
        // 34 lines, 36 rows, 21 on screen: the last top is row 15 of the page, which is line 13.
        state.apply(.bottom, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 13))
        state.apply(.pageDown, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 13), "never past the last screenful")
        state.apply(.pageUp, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 0))
        state.apply(.top, content: content, size: size)
        XCTAssertEqual(state.position(of: .response), DetailPosition(line: 0))
    }

    /// Right (or l) means "show me the rest of this line": it unwraps and scrolls.
    func testScrollingSidewaysUnwraps() {
        let content = FlowDetailStateTests.textContent(lines: 30, wideLine: 200)
        let size = ScreenSize(width: 80, height: 24)
        var state = FlowDetailState()
        state.apply(.scrollRight, content: content, size: size)
        XCTAssertFalse(state.wraps)
        XCTAssertEqual(state.left(of: .response), 8)
    }

    /// A wide character never straddles the edge; tiny and zero widths neither loop nor trap.
    func testWideCharactersAndTinyScreens() {
        var flow = DetailFixtures.failed
        flow.error = String(repeating: "日", count: 50)
        let lines = render(flow, FlowDetailState(tab: .response), width: 80, height: 24)
        let first = lines.first { $0.hasPrefix("No response:") }
        XCTAssertEqual(first, "No response: " + String(repeating: "日", count: 33), "79 of 80 columns: the 34th would straddle the edge")
        XCTAssertTrue(lines.joined().contains(String(repeating: "日", count: 50)))
        for width in [0, 1, 2, 3] {
            let grid = DetailFixtures.render(DetailFixtures.content(flow), FlowDetailState(tab: .response), width: width, height: 6)
            XCTAssertEqual(grid.width, width)
        }
        let content = DetailFixtures.content(flow)
        var state = FlowDetailState(tab: .response)
        for action in [DetailAction.bottom, .pageDown, .scrollDown, .pageUp] {
            state.apply(action, content: content, size: ScreenSize(width: 1, height: 4))
        }
        XCTAssertEqual(state.position(of: .response).line, 0)
    }
}
