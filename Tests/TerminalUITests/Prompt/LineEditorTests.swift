import TerminalUI
import XCTest

/// `LineEditor`: the prompt's editing keys.
final class LineEditorTests: XCTestCase {
    private func edit(_ start: String, _ keys: [Key]) -> LineEditor {
        var editor = LineEditor(start)
        for key in keys { _ = editor.handle(key) }
        return editor
    }

    func testTypingAndCursorMovement() {
        var editor = edit("", "~d api".map { Key.character($0) })
        XCTAssertEqual(editor.string, "~d api")
        XCTAssertEqual(editor.cursor, 6)
        editor = edit("~d api", [.home, .character("!"), .end, .character("2"), .left, .left, .delete])
        XCTAssertEqual(editor.string, "!~d ap2", "Delete removes the character after the cursor")
        XCTAssertEqual(editor.cursor, 6)
        editor = edit("日本語", [.left, .backspace])
        XCTAssertEqual(editor.string, "日語", "a wide character is one step")
    }

    func testKillKeys() {
        XCTAssertEqual(edit("~d api & ~m GET", [.control("w")]).string, "~d api & ~m ")
        XCTAssertEqual(edit("~d api & ~m GET", [.control("w"), .control("w")]).string, "~d api & ")
        XCTAssertEqual(edit("~d api", [.left, .left, .control("u")]).string, "pi")
        XCTAssertEqual(edit("~d api", [.home, .right, .control("k")]).string, "~")
        XCTAssertEqual(edit("x", [.backspace, .backspace, .control("w")]).string, "", "nothing left to delete is no error")
    }

    func testOutcomes() {
        var editor = LineEditor("~c 200")
        XCTAssertEqual(editor.handle(.enter), .submitted("~c 200"))
        XCTAssertEqual(editor.handle(.escape), .cancelled)
        XCTAssertEqual(editor.handle(.control("c")), .cancelled)
        XCTAssertEqual(editor.handle(.pageDown), .ignored)
        XCTAssertEqual(editor.handle(.character("x")), .edited)
        editor.moveCursor(to: 99)
        XCTAssertEqual(editor.cursor, 7)
        editor.moveCursor(to: 2)
        XCTAssertEqual(editor.cursor, 2)
    }
}
