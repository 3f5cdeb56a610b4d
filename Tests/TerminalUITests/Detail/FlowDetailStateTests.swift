import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowDetailState`: tab cycling, scrolling clamped to the content, per-tab body view modes.
final class FlowDetailStateTests: XCTestCase {
    private let size = ScreenSize(width: 80, height: 24)

    /// A flow whose response is `lines` lines of text, line 5 being `wideLine` columns wide.
    static func textContent(lines: Int = 100, wideLine: Int = 120) -> FlowDetailContent {
        var text = (0..<lines).map { "line \($0)" }
        if lines > 5 { text[5] = String(repeating: "w", count: wideLine) }
        let body = CapturedBody(bytes: Data(text.joined(separator: "\n").utf8), size: 0)
        let headers = [HeaderField(name: "Content-Type", value: "text/plain")]
        let flow = Flow(method: "GET", host: "example.com", path: "/big.txt", status: 200, reason: "OK",
                        responseHeaders: headers, responseBody: body)
        return FlowDetailContent(flow: flow, requestBody: BodyDocument(body: flow.requestBody, headers: []),
                                 responseBody: BodyDocument(body: body, headers: headers), timeZone: DetailFixtures.utc)
    }

    func testTabsCycleBothWaysAndCanBeSelected() {
        let content = DetailFixtures.content(DetailFixtures.login)
        var state = FlowDetailState()
        XCTAssertEqual(state.tab, .response)
        var seen: [DetailTab] = []
        for _ in 0..<3 {
            state.apply(.nextTab, content: content, size: size)
            seen.append(state.tab)
        }
        XCTAssertEqual(seen, [.timing, .request, .response])
        state.apply(.previousTab, content: content, size: size)
        XCTAssertEqual(state.tab, .request)
        state.apply(.previousTab, content: content, size: size)
        XCTAssertEqual(state.tab, .timing)
        state.apply(.selectTab(.request), content: content, size: size)
        XCTAssertEqual(state.tab, .request)
        XCTAssertEqual(content.tabs.map(\.title), ["Request", "Response", "Timing/TLS"])
        state.apply(.selectTab(.webSocket), content: content, size: size)
        XCTAssertEqual(state.tab, .request, "no WebSocket tab for a flow that did not upgrade")
    }

    /// A WebSocket flow has a fourth tab, in the cycle and on `4`.
    func testWebSocketFlowsHaveAFourthTab() {
        var content = Self.textContent()
        content.flow.status = 101
        content.messages = []
        XCTAssertEqual(content.tabs.map(\.title), ["Request", "Response", "Timing/TLS", "WebSocket"])
        var state = FlowDetailState(tab: .timing)
        state.apply(.nextTab, content: content, size: size)
        XCTAssertEqual(state.tab, .webSocket)
        state.apply(.nextTab, content: content, size: size)
        XCTAssertEqual(state.tab, .request)
        state.apply(.selectTab(.webSocket), content: content, size: size)
        XCTAssertEqual(state.tab, .webSocket)
    }

    /// 100 body lines after 3 head lines (status line, header, blank) and the body rule: 104 lines, 21 rows.
    func testVerticalScrollingIsClampedToTheContent() {
        let content = Self.textContent()
        var state = FlowDetailState()
        state.wraps = false  // one row a line (wrapped scrolling: DetailWrapTests)
        state.apply(.scrollUp, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 0)
        state.apply(.scrollDown, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 1)
        state.apply(.pageDown, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 22)
        state.apply(.bottom, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 104 - 21)
        state.apply(.scrollDown, content: content, size: size)
        state.apply(.pageDown, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 83, "the last line stays at the bottom")
        state.apply(.pageUp, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 62)
        state.apply(.top, content: content, size: size)
        XCTAssertEqual(state.top(of: .response), 0)

        state.apply(.bottom, content: content, size: size)
        state.apply(.selectTab(.request), content: content, size: size)
        XCTAssertEqual(state.top(of: .request), 0, "each tab keeps its own place")
        XCTAssertEqual(state.top(of: .response), 83)

        let short = DetailFixtures.content(DetailFixtures.pending)
        var other = FlowDetailState(tab: .request)
        other.apply(.pageDown, content: short, size: size)
        XCTAssertEqual(other.top(of: .request), 0, "content shorter than the screen never scrolls")
    }

    func testHorizontalScrollingStopsAtTheWidestLineOnScreen() {
        let content = Self.textContent(wideLine: 100)
        var state = FlowDetailState()
        state.apply(.scrollRight, content: content, size: size)
        XCTAssertEqual(state.left(of: .response), 8)
        for _ in 0..<5 { state.apply(.scrollRight, content: content, size: size) }
        XCTAssertEqual(state.left(of: .response), 20, "100 columns on an 80-column screen")
        state.apply(.scrollLeft, content: content, size: size)
        XCTAssertEqual(state.left(of: .response), 12)
        for _ in 0..<3 { state.apply(.scrollLeft, content: content, size: size) }
        XCTAssertEqual(state.left(of: .response), 0)

        state.apply(.pageDown, content: content, size: size)
        state.apply(.scrollRight, content: content, size: size)
        XCTAssertEqual(state.left(of: .response), 0, "no wide line on screen any more")
    }

    func testBodyViewModesArePerTabAndSkipModesThatDoNotApply() {
        let content = DetailFixtures.content(DetailFixtures.login)
        var state = FlowDetailState()
        var modes: [BodyViewMode?] = [state.bodyMode(of: .response, content: content)]
        for _ in 0..<3 {
            state.apply(.cycleBodyView, content: content, size: size)
            modes.append(state.bodyMode(of: .response, content: content))
        }
        XCTAssertEqual(modes, [.json, .text, .hex, .json], "no form view for JSON")
        state.apply(.cycleBodyView, content: content, size: size)
        XCTAssertEqual(state.chosenMode(of: .response), .text)

        XCTAssertEqual(state.bodyMode(of: .request, content: content), .form, "the request keeps its detected view")
        state.apply(.selectTab(.request), content: content, size: size)
        modes = []
        for _ in 0..<3 {
            state.apply(.cycleBodyView, content: content, size: size)
            modes.append(state.bodyMode(of: .request, content: content))
        }
        XCTAssertEqual(modes, [.text, .hex, .form])
        XCTAssertEqual(state.bodyMode(of: .response, content: content), .text)

        state.apply(.selectTab(.timing), content: content, size: size)
        let before = state
        state.apply(.cycleBodyView, content: content, size: size)
        XCTAssertEqual(state, before, "the Timing tab has no body")
        XCTAssertNil(state.bodyMode(of: .timing, content: content))
    }

    func testCyclingWaitsForALoadingBody() {
        let loading = FlowDetailContent(flow: DetailFixtures.login, requestBody: nil, responseBody: nil)
        var state = FlowDetailState()
        state.apply(.cycleBodyView, content: loading, size: size)
        XCTAssertNil(state.chosenMode(of: .response))
        XCTAssertNil(state.bodyMode(of: .response, content: loading))
    }

    func testAChosenModeTheBodyDoesNotOfferGivesWayToTheDetectedOne() {
        var state = FlowDetailState()
        let json = DetailFixtures.content(DetailFixtures.login)
        state.apply(.cycleBodyView, content: json, size: size)
        state.apply(.cycleBodyView, content: json, size: size)
        XCTAssertEqual(state.chosenMode(of: .response), .hex)
        let text = Self.textContent()
        XCTAssertEqual(state.bodyMode(of: .response, content: text), .hex, "hex applies to every body")
        state.apply(.cycleBodyView, content: json, size: size)
        XCTAssertEqual(state.chosenMode(of: .response), .json)
        XCTAssertEqual(state.bodyMode(of: .response, content: text), .text, "no json here: the detected mode")
    }
}
