/// One key press as the UI sees it, after the terminal's bytes are decoded: the vocabulary
/// shared by the key decoder (backend) and the key bindings (model).
public enum Key: Sendable, Hashable {
    /// A printable character (`q`, `/`, `G`, `é`).
    case character(Character)
    /// Ctrl plus a letter, lower-cased: `.control("c")` for Ctrl-C.
    case control(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace, delete, insert
    /// F1 … F12.
    case function(Int)
    case mouseWheelUp, mouseWheelDown
    /// A mouse click at a 0-based screen position.
    case mouseClick(row: Int, column: Int)
}
