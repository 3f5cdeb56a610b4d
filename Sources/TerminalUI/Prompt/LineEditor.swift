/// A one-line text field for the status-line prompts (the view filter, a file name): the text,
/// a cursor, and the usual editing keys of a shell line.
///
/// Pure and `Character`-indexed, so a test can type into it and a wide character or a combining
/// accent is one step of the cursor.
public struct LineEditor: Sendable, Equatable {
    public private(set) var text: [Character]
    /// The insertion point, `0...text.count`.
    public private(set) var cursor: Int

    public init(_ text: String = "") {
        self.text = Array(text)
        cursor = self.text.count
    }

    public var string: String { String(text) }

    /// What a key did to the line.
    public enum Outcome: Sendable, Equatable {
        case edited
        case submitted(String)
        case cancelled
        /// Not an editing key: the prompt ignores it.
        case ignored
    }

    /// Applies one key, as readline does: printable characters insert; Left/Right/Home/End,
    /// Ctrl-A/E/B/F and Alt-B/F (a word back, forward) move; Backspace/Delete/Ctrl-H/Ctrl-D
    /// delete; Ctrl-U clears the whole line wherever the cursor is (an error may have moved it),
    /// Ctrl-K deletes to the end, Ctrl-W the blank-separated word before the cursor, Alt-D the
    /// word after it, Alt-Backspace the word before it; Enter submits; Escape, Ctrl-C and Ctrl-G cancel.
    public mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .character(let character):
            text.insert(character, at: cursor)
            cursor += 1
        case .enter: return .submitted(string)
        case .escape, .control("c"), .control("g"): return .cancelled
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(text.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = text.count
        case .backspace, .control("h"):
            guard cursor > 0 else { return .edited }
            text.remove(at: cursor - 1)
            cursor -= 1
        case .delete, .control("d"):
            if cursor < text.count { text.remove(at: cursor) }
        case .control("u"):
            text.removeAll()
            cursor = 0
        case .control("k"):
            text.removeSubrange(cursor...)
        case .control("w"):
            var start = cursor
            while start > 0, text[start - 1] == " " { start -= 1 }
            while start > 0, text[start - 1] != " " { start -= 1 }
            text.removeSubrange(start..<cursor)
            cursor = start
        case .alt("b"), .alt("B"): cursor = wordStart(before: cursor)
        case .alt("f"), .alt("F"): cursor = wordEnd(after: cursor)
        case .alt("d"), .alt("D"): text.removeSubrange(cursor..<wordEnd(after: cursor))
        case .alt(Key.altBackspace):
            let start = wordStart(before: cursor)
            text.removeSubrange(start..<cursor)
            cursor = start
        default: return .ignored
        }
        return .edited
    }

    /// Readline's words for Alt-B/F/D: runs of letters and digits.
    private func isWordCharacter(_ index: Int) -> Bool {
        text[index].isLetter || text[index].isNumber
    }

    /// The start of the word at or before `position`, skipping non-word characters first.
    private func wordStart(before position: Int) -> Int {
        var index = position
        while index > 0, !isWordCharacter(index - 1) { index -= 1 }
        while index > 0, isWordCharacter(index - 1) { index -= 1 }
        return index
    }

    /// The end of the word at or after `position`, skipping non-word characters first.
    private func wordEnd(after position: Int) -> Int {
        var index = position
        while index < text.count, !isWordCharacter(index) { index += 1 }
        while index < text.count, isWordCharacter(index) { index += 1 }
        return index
    }

    /// Moves the cursor to a character offset (clamped): where a syntax error points.
    public mutating func moveCursor(to offset: Int) {
        cursor = min(max(0, offset), text.count)
    }
}
