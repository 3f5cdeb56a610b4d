/// One key press as the UI sees it, after the terminal's bytes are decoded: the vocabulary
/// shared by the key decoder (backend) and the key bindings (model).
public enum Key: Sendable, Hashable {
    /// A printable character (`q`, `/`, `G`, `é`).
    case character(Character)
    /// Ctrl plus a letter, lower-cased: `.control("c")` for Ctrl-C.
    case control(Character)
    /// Alt (Meta) plus a printable ASCII character, sent as ESC then the character: `.alt("b")`;
    /// Alt-Backspace is `.alt(Key.altBackspace)`. Outside a prompt the app reads it as Escape
    /// followed by the key (`unaltered`).
    case alt(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace, delete, insert
    /// F1 … F12.
    case function(Int)
    case mouseWheelUp, mouseWheelDown
    /// A mouse click at a 0-based screen position.
    case mouseClick(row: Int, column: Int)

    /// The character of Alt-Backspace (DEL).
    public static let altBackspace: Character = "\u{7F}"

    /// The key Alt was held with: `.alt("q")` → `q`, Alt-Backspace → Backspace.
    public var unaltered: Key? {
        guard case .alt(let character) = self else { return nil }
        return character == Self.altBackspace ? .backspace : .character(character)
    }

    /// How a status line or the help screen names the key: `r`, `Ctrl-X`, `Alt-b`, `F5`, `PageUp`.
    public var name: String {
        switch self {
        case .character(" "): "Space"
        case .character(let character): String(character)
        case .control(let character): "Ctrl-\(character.uppercased())"
        case .alt(Self.altBackspace): "Alt-Backspace"
        case .alt(let character): "Alt-\(character)"
        case .up: "Up"
        case .down: "Down"
        case .left: "Left"
        case .right: "Right"
        case .pageUp: "PageUp"
        case .pageDown: "PageDown"
        case .home: "Home"
        case .end: "End"
        case .enter: "Enter"
        case .escape: "Esc"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .backspace: "Backspace"
        case .delete: "Delete"
        case .insert: "Insert"
        case .function(let number): "F\(number)"
        case .mouseWheelUp: "wheel up"
        case .mouseWheelDown: "wheel down"
        case .mouseClick: "click"
        }
    }
}
