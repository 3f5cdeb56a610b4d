import TerminalUI
import XCTest

/// `KeyBindings.standard`: the keys the issue promises, and a help table that lists them all.
final class KeyBindingsTests: XCTestCase {
    private let keys = KeyBindings.standard

    func testListMovementKeys() {
        let expected: [(Key, FlowListAction)] = [
            (.character("j"), .moveDown), (.down, .moveDown), (.mouseWheelDown, .moveDown),
            (.character("k"), .moveUp), (.up, .moveUp), (.mouseWheelUp, .moveUp),
            (.pageDown, .pageDown), (.control("f"), .pageDown), (.pageUp, .pageUp), (.control("b"), .pageUp),
            (.character("g"), .home), (.home, .home), (.character("G"), .end), (.end, .end),
            (.character("F"), .follow),
        ]
        for (key, action) in expected {
            XCTAssertEqual(keys.action(for: key), .list(action), "\(key)")
        }
    }

    func testCommandKeys() {
        let expected: [(Key, UIAction)] = [
            (.character("q"), .quit), (.character("?"), .help), (.character("/"), .editFilter),
            (.character("n"), .searchNext), (.character("N"), .searchPrevious), (.character("m"), .toggleMark),
            (.character("d"), .deleteFlow), (.character("z"), .clearAll), (.character("e"), .exportHAR),
            (.character("c"), .saveCurl), (.character("p"), .showPins), (.enter, .openDetail),
            (.character("y"), .copy),
            (.character("i"), .showInfo), (.character("E"), .showEventLog), (.character("r"), .replay),
            (.character("b"), .editIntercept), (.tab, .nextHeld), (.character("a"), .acceptHeld),
            (.character("A"), .acceptAllHeld), (.character("x"), .killHeld),
        ]
        for (key, action) in expected {
            XCTAssertEqual(keys.action(for: key), action, "\(key)")
        }
        XCTAssertNil(keys.action(for: .character("o")))
        XCTAssertNil(keys.action(for: .control("j")), "Ctrl-J is not j")
    }

    /// No key is bound twice (a later binding would silently win), and help names every action once.
    func testTableHasNoDuplicatesAndHelpListsEveryAction() {
        let boundKeys = keys.bindings.map(\.key)
        XCTAssertEqual(Set(boundKeys).count, boundKeys.count)
        let help = keys.helpEntries
        XCTAssertEqual(help.count, Set(keys.bindings.map(\.action)).count)
        XCTAssertEqual(help.first?.keys, "k, Up, wheel up")
        XCTAssertEqual(help.first?.description, "select the previous flow")
        XCTAssertTrue(help.contains { $0.keys == "G, End" && $0.description == "last flow, follow new flows" })
        XCTAssertTrue(help.allSatisfy { !$0.description.isEmpty && !$0.keys.isEmpty })
        for action in FlowListAction.allCases {
            XCTAssertTrue(keys.bindings.contains { $0.action == .list(action) }, "\(action) has a key")
        }
    }

    /// How the "no such key" message and help name keys.
    func testKeyNames() {
        let names: [(Key, String)] = [
            (.character("r"), "r"), (.character(" "), "Space"), (.control("t"), "Ctrl-T"), (.alt("x"), "Alt-x"), (.alt(Key.altBackspace), "Alt-Backspace"),
            (.function(5), "F5"), (.pageDown, "PageDown"), (.backTab, "Shift-Tab"), (.insert, "Insert"), (.character("é"), "é"),
        ]
        for (key, name) in names { XCTAssertEqual(key.name, name) }
    }

    func testLaterBindingsReplaceEarlierOnes() {
        let custom = KeyBindings([KeyBinding(.character("x"), "x", .quit), KeyBinding(.character("x"), "x", .help)])
        XCTAssertEqual(custom.action(for: .character("x")), .help)
    }
}
