import ProxyModel
import TerminalUI
import XCTest

/// `KeyBindings.detail`: the promised keys, no key twice, and every binding does something.
final class DetailKeyBindingsTests: XCTestCase {
    private let keys = KeyBindings.detail
    private let size = ScreenSize(width: 80, height: 24)

    func testPromisedKeys() {
        let expected: [(Key, UIAction)] = [
            (.tab, .detail(.nextTab)), (.backTab, .detail(.previousTab)), (.character("1"), .detail(.selectTab(.request))),
            (.character("3"), .detail(.selectTab(.timing))), (.character("j"), .detail(.scrollDown)),
            (.up, .detail(.scrollUp)), (.character(" "), .detail(.pageDown)), (.control("b"), .detail(.pageUp)),
            (.character("g"), .detail(.top)), (.end, .detail(.bottom)), (.character("l"), .detail(.scrollRight)),
            (.left, .detail(.scrollLeft)), (.character("v"), .detail(.cycleBodyView)), (.character("q"), .closeDetail),
            (.escape, .closeDetail), (.backspace, .closeDetail), (.character("?"), .help), (.character("c"), .saveCurl),
            (.character("m"), .toggleMark), (.character("w"), .detail(.toggleWrap)), (.character("y"), .copy),
        ]
        for (key, action) in expected {
            XCTAssertEqual(keys.action(for: key), action, "\(key)")
        }
        XCTAssertNil(keys.action(for: .character("d")), "no deleting from the detail view")
        XCTAssertNil(keys.action(for: .enter))
    }

    func testNoKeyTwiceAndHelpDescribesEveryAction() {
        let bound = keys.bindings.map(\.key)
        XCTAssertEqual(Set(bound).count, bound.count)
        let help = keys.helpEntries
        XCTAssertEqual(help.count, Set(keys.bindings.map(\.action)).count)
        XCTAssertTrue(help.contains { $0.keys == "q, Esc, Backspace" && $0.description == "back to the flow list" })
        XCTAssertTrue(help.contains { $0.keys == "2" && $0.description == "show the Response tab" })
        XCTAssertEqual(Set(help.map(\.description)).count, help.count, "no two actions read the same")
    }

    /// Each detail action, applied where it can act, changes the state; the rest are the app's.
    func testEveryBindingIsHandled() {
        var content = FlowDetailStateTests.textContent(lines: 100, wideLine: 200)
        // A rule changed the response, so `f` has a second side to show.
        content.flow.originResponse = OriginResponse(status: 500, reason: nil, headers: [])
        // And it carried WebSocket messages, so `4` has a tab to show.
        content.flow.messageCount = 1
        content.messages = []
        let appActions: Set<UIAction> = [.closeDetail, .help, .saveCurl, .toggleMark, .copy, .replay, .editResend]
        for binding in keys.bindings {
            guard case .detail(let action) = binding.action else {
                XCTAssertTrue(appActions.contains(binding.action), "\(binding.name) → \(binding.action)")
                continue
            }
            var state = FlowDetailState(tab: action == .selectTab(.response) ? .request : .response)
            if state.tab == .response {  // somewhere in the middle, scrolled right
                state.apply(.scrollDown, content: content, size: size)
                state.apply(.scrollDown, content: content, size: size)
                state.apply(.scrollRight, content: content, size: size)
                XCTAssertEqual(state.left(of: .response), 8)
            }
            let before = state
            state.apply(action, content: content, size: size)
            XCTAssertNotEqual(state, before, "\(binding.name) → \(action) did nothing")
        }
    }
}
