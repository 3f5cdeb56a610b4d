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
        XCTAssertEqual(edit("~d api", [.left, .left, .control("u")]).string, "", "Ctrl-U clears the whole line")
        XCTAssertEqual(edit("~d api", [.home, .right, .control("k")]).string, "~")
        XCTAssertEqual(edit("x", [.backspace, .backspace, .control("w")]).string, "", "nothing left to delete is no error")
    }

    /// Ctrl-U clears the line wherever the cursor is: after a filter error moved it to the
    /// error's column, the user types a fresh expression, not the old tail after it.
    func testControlUClearsTheWholeLineAfterAnErrorMovedTheCursor() {
        var editor = LineEditor("~c 200 & (")
        editor.moveCursor(to: 3)
        XCTAssertEqual(editor.handle(.control("u")), .edited)
        XCTAssertEqual(editor.string, "")
        XCTAssertEqual(editor.cursor, 0)
        XCTAssertEqual(editor.handle(.control("u")), .edited, "an empty line stays empty")
    }

    /// Readline's motion and kill keys: Ctrl-A/E, Alt-B/F by words of letters and digits,
    /// Ctrl-K to the end, Ctrl-W the blank-separated word before the cursor, Alt-D the next word.
    func testReadlineKeys() {
        let line = "~d api.test & ~m GET"
        var editor = edit(line, [.alt("b")])
        XCTAssertEqual(editor.cursor, 17, "Alt-B: to the start of GET")
        editor = edit(line, [.alt("b"), .alt("b"), .alt("b")])
        XCTAssertEqual(editor.cursor, 7, "Alt-B skips the dot and stops at `test`")
        editor = edit(line, [.control("a"), .alt("f")])
        XCTAssertEqual(editor.cursor, 2, "Alt-F: to the end of `d`")
        editor = edit(line, [.control("a"), .alt("f"), .alt("f"), .control("k")])
        XCTAssertEqual(editor.string, "~d api")
        editor = edit(line, [.control("a"), .alt("d")])
        XCTAssertEqual(editor.string, " api.test & ~m GET", "Alt-D deletes `~d`")
        editor = edit(line, [.control("a"), .control("e"), .alt("B"), .control("w")])
        XCTAssertEqual(editor.string, "~d api.test & GET", "Ctrl-W deletes `~m ` before the cursor")
        XCTAssertEqual(editor.cursor, 14)
        editor = edit(line, [.alt(Key.altBackspace)])
        XCTAssertEqual(editor.string, "~d api.test & ~m ", "Alt-Backspace deletes the word before the cursor")
        editor = edit(line, [.alt(Key.altBackspace), .alt(Key.altBackspace)])
        XCTAssertEqual(editor.string, "~d api.test & ~", "letters and digits only: the ~ stays")
        // At the ends nothing moves and nothing is an error.
        XCTAssertEqual(edit("", [.alt("b"), .alt("f"), .alt("d"), .control("k"), .control("w")]).string, "")
        XCTAssertEqual(edit("ab", [.alt("f")]).cursor, 2)
        XCTAssertEqual(edit("日本 語", [.alt("b")]).cursor, 3, "letters of any script are word characters")
        var other = LineEditor("x")
        XCTAssertEqual(other.handle(.alt("x")), .ignored, "another Alt key is not an edit")
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
