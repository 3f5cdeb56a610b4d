extension KeyBindings {
    /// The detail view's keys. Only the view's own actions plus the few the app handles in both
    /// views (`?` help, `c` save as curl, `m` mark, `r` replay); q, Esc and Backspace go back to the list.
    public static let detail = KeyBindings([
        KeyBinding(.tab, "Tab", .detail(.nextTab)),
        KeyBinding(.backTab, "Shift-Tab", .detail(.previousTab)),
        KeyBinding(.character("1"), "1", .detail(.selectTab(.request))),
        KeyBinding(.character("2"), "2", .detail(.selectTab(.response))),
        KeyBinding(.character("3"), "3", .detail(.selectTab(.timing))),
        KeyBinding(.character("4"), "4", .detail(.selectTab(.webSocket))),
        KeyBinding(.character("k"), "k", .detail(.scrollUp)),
        KeyBinding(.up, "Up", .detail(.scrollUp)),
        KeyBinding(.mouseWheelUp, "wheel up", .detail(.scrollUp)),
        KeyBinding(.character("j"), "j", .detail(.scrollDown)),
        KeyBinding(.down, "Down", .detail(.scrollDown)),
        KeyBinding(.mouseWheelDown, "wheel down", .detail(.scrollDown)),
        KeyBinding(.pageUp, "PageUp", .detail(.pageUp)),
        KeyBinding(.control("b"), "Ctrl-B", .detail(.pageUp)),
        KeyBinding(.pageDown, "PageDown", .detail(.pageDown)),
        KeyBinding(.character(" "), "Space", .detail(.pageDown)),
        KeyBinding(.control("f"), "Ctrl-F", .detail(.pageDown)),
        KeyBinding(.character("g"), "g", .detail(.top)),
        KeyBinding(.home, "Home", .detail(.top)),
        KeyBinding(.character("G"), "G", .detail(.bottom)),
        KeyBinding(.end, "End", .detail(.bottom)),
        KeyBinding(.character("h"), "h", .detail(.scrollLeft)),
        KeyBinding(.left, "Left", .detail(.scrollLeft)),
        KeyBinding(.character("l"), "l", .detail(.scrollRight)),
        KeyBinding(.right, "Right", .detail(.scrollRight)),
        KeyBinding(.character("v"), "v", .detail(.cycleBodyView)),
        KeyBinding(.character("w"), "w", .detail(.toggleWrap)),
        KeyBinding(.character("f"), "f", .detail(.toggleOriginSide)),
        KeyBinding(.character("m"), "m", .toggleMark),
        KeyBinding(.character("c"), "c", .saveCurl),
        KeyBinding(.character("y"), "y", .copy),
        KeyBinding(.character("r"), "r", .replay),
        KeyBinding(.character("R"), "R", .editResend),
        KeyBinding(.character("?"), "?", .help),
        KeyBinding(.character("q"), "q", .closeDetail),
        KeyBinding(.escape, "Esc", .closeDetail),
        KeyBinding(.backspace, "Backspace", .closeDetail),
    ])
}

extension DetailAction {
    /// One line for the help screen.
    public var description: String {
        switch self {
        case .nextTab: "next tab"
        case .previousTab: "previous tab"
        case .selectTab(let tab): "show the \(tab.title) tab"
        case .scrollUp: "scroll up"
        case .scrollDown: "scroll down"
        case .pageUp: "page up"
        case .pageDown: "page down"
        case .top: "first line"
        case .bottom: "last line"
        case .scrollLeft: "scroll left"
        case .scrollRight: "scroll right"
        case .cycleBodyView: "next body view (json, form, text, hex)"
        case .toggleWrap: "wrap long lines, or cut them at the edge"
        case .toggleOriginSide: "as sent / as forwarded (when a rule changed it)"
        }
    }
}
