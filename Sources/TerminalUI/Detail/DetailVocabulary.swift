/// The three pages of the flow detail view, in the order Tab walks them.
public enum DetailTab: Sendable, Hashable, CaseIterable {
    case request, response, timing
    /// A WebSocket's messages (shown for flows that upgraded to one).
    case webSocket

    /// The tab bar's label.
    public var title: String {
        switch self {
        case .request: "Request"
        case .response: "Response"
        case .timing: "Timing/TLS"
        case .webSocket: "WebSocket"
        }
    }
}

/// How a body is shown. A body offers the modes that make sense for it
/// (`BodyDocument.availableModes`); text and hex always apply.
public enum BodyViewMode: Sendable, Hashable, CaseIterable {
    /// Pretty-printed JSON (key order and number spelling as sent).
    case json
    /// `application/x-www-form-urlencoded` fields, one `name: value` per line, percent-decoded.
    case form
    /// UTF-8 text, invalid bytes as U+FFFD, tabs expanded.
    case text
    /// 16 bytes per line: offset, hex bytes, printable ASCII.
    case hex

    /// How the body separator and the status line name the mode.
    public var title: String {
        switch self {
        case .json: "json"
        case .form: "form"
        case .text: "text"
        case .hex: "hex"
        }
    }
}

/// A change to the detail view, produced by `KeyBindings.detail` and applied by `FlowDetailState`.
public enum DetailAction: Sendable, Hashable {
    case nextTab, previousTab
    case selectTab(DetailTab)
    case scrollUp, scrollDown, pageUp, pageDown, top, bottom, scrollLeft, scrollRight
    /// The next body view that applies to the current tab's body, wrapping around.
    case cycleBodyView
    /// Long lines wrap onto the next rows, or are cut at the edge (then Left/Right scroll).
    case toggleWrap
    /// Request and Response tabs switch between the client's side of the exchange (as sent by
    /// the client, as the client got it) and the origin's (as forwarded, as the origin sent it).
    case toggleOriginSide
}
