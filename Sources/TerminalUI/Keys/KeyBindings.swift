/// One entry of the key table: a key, how help names it, and what it does.
public struct KeyBinding: Sendable, Hashable {
    public var key: Key
    /// How the help screen writes the key (`j`, `Ctrl-F`, `PageDown`).
    public var name: String
    public var action: UIAction

    public init(_ key: Key, _ name: String, _ action: UIAction) {
        self.key = key
        self.name = name
        self.action = action
    }
}

/// A view's keys as one typed table (the flow list's `standard`, the detail view's `detail`): the
/// dispatcher looks keys up in it and the `?` help screen lists it, so the two can never disagree.
public struct KeyBindings: Sendable {
    public let bindings: [KeyBinding]
    private let actions: [Key: UIAction]

    /// Later bindings of the same key replace earlier ones.
    public init(_ bindings: [KeyBinding]) {
        self.bindings = bindings
        actions = Dictionary(bindings.map { ($0.key, $0.action) }, uniquingKeysWith: { _, last in last })
    }

    public func action(for key: Key) -> UIAction? {
        actions[key]
    }

    /// The help screen's lines: each action once, in table order, with all its keys
    /// (`j, Down, wheel down`) and its description.
    public var helpEntries: [(keys: String, description: String)] {
        var order: [UIAction] = []
        var names: [UIAction: [String]] = [:]
        for binding in bindings {
            if names[binding.action] == nil { order.append(binding.action) }
            names[binding.action, default: []].append(binding.name)
        }
        return order.map { (keys: names[$0, default: []].joined(separator: ", "), description: $0.description) }
    }

    public static let standard = KeyBindings([
        KeyBinding(.character("k"), "k", .list(.moveUp)),
        KeyBinding(.up, "Up", .list(.moveUp)),
        KeyBinding(.mouseWheelUp, "wheel up", .list(.moveUp)),
        KeyBinding(.character("j"), "j", .list(.moveDown)),
        KeyBinding(.down, "Down", .list(.moveDown)),
        KeyBinding(.mouseWheelDown, "wheel down", .list(.moveDown)),
        KeyBinding(.pageUp, "PageUp", .list(.pageUp)),
        KeyBinding(.control("b"), "Ctrl-B", .list(.pageUp)),
        KeyBinding(.pageDown, "PageDown", .list(.pageDown)),
        KeyBinding(.control("f"), "Ctrl-F", .list(.pageDown)),
        KeyBinding(.character("g"), "g", .list(.home)),
        KeyBinding(.home, "Home", .list(.home)),
        KeyBinding(.character("G"), "G", .list(.end)),
        KeyBinding(.end, "End", .list(.end)),
        KeyBinding(.character("F"), "F", .list(.follow)),
        KeyBinding(.enter, "Enter", .openDetail),
        KeyBinding(.character("/"), "/", .editFilter),
        KeyBinding(.character("s"), "s", .editSearch),
        KeyBinding(.character("n"), "n", .searchNext),
        KeyBinding(.character("N"), "N", .searchPrevious),
        KeyBinding(.character("m"), "m", .toggleMark),
        KeyBinding(.character("d"), "d", .deleteFlow),
        KeyBinding(.character("z"), "z", .clearAll),
        KeyBinding(.character("e"), "e", .exportHAR),
        KeyBinding(.character("c"), "c", .saveCurl),
        KeyBinding(.character("r"), "r", .replay),
        KeyBinding(.character("R"), "R", .editResend),
        KeyBinding(.character("b"), "b", .editIntercept),
        KeyBinding(.tab, "Tab", .nextHeld),
        KeyBinding(.character("a"), "a", .acceptHeld),
        KeyBinding(.character("A"), "A", .acceptAllHeld),
        KeyBinding(.character("x"), "x", .killHeld),
        KeyBinding(.character("y"), "y", .copy),
        KeyBinding(.character("p"), "p", .showPins),
        KeyBinding(.character("i"), "i", .showInfo),
        KeyBinding(.character("Q"), "Q", .showQRCode),
        KeyBinding(.character("E"), "E", .showEventLog),
        KeyBinding(.character("?"), "?", .help),
        KeyBinding(.character("q"), "q", .quit),
    ])
}
