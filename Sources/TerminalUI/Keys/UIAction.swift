/// Everything a key can ask the UI to do: the vocabulary between `KeyBindings` and the app.
///
/// Named commands rather than keys, so the model reacts to meanings, the help screen lists the
/// same table the dispatcher uses, and tests can check that every binding leads somewhere.
public enum UIAction: Sendable, Hashable {
    /// A movement of the flow list's selection.
    case list(FlowListAction)
    case quit
    case help
    /// Prompt for a view filter (`/`).
    case editFilter
    /// Prompt for a search expression (`s`), then jump to the next match.
    case editSearch
    case searchNext
    case searchPrevious
    case toggleMark
    case deleteFlow
    case clearAll
    case exportHAR
    case saveCurl
    /// Send the flow — or every marked flow of the view, in order — again through the proxy (`r`).
    case replay
    /// Breakpoints: set the filter (`b`), pick a held exchange (Tab), accept it (`a`), accept
    /// all (`A`), kill it (`x`).
    /// Edit the flow's request in `$EDITOR` and send it through the proxy (`R`).
    case editResend
    case editIntercept
    case nextHeld
    case acceptHeld
    case acceptAllHeld
    case killHeld
    /// Copy to the clipboard (`y`), then a key says what: the URL, curl, the body, the raw request.
    case copy
    case showPins
    /// The info screen (`i`): how to send traffic, the CA page, the rules, the files.
    case showInfo
    /// A QR code of the CA page for a phone to scan (`Q`).
    case showQRCode
    /// The proxy's log lines (`E`).
    case showEventLog
    case openDetail
    /// A change inside the flow detail view (tabs, scrolling, body view).
    case detail(DetailAction)
    /// Leave the detail view for the flow list.
    case closeDetail

    /// One line for the help screen.
    public var description: String {
        switch self {
        case .list(.moveUp): "select the previous flow"
        case .list(.moveDown): "select the next flow"
        case .list(.pageUp): "page up"
        case .list(.pageDown): "page down"
        case .list(.home): "first flow"
        case .list(.end): "last flow, follow new flows"
        case .list(.follow): "follow new flows"
        case .quit: "quit"
        case .help: "show the key bindings"
        case .editFilter: "set the view filter"
        case .editSearch: "search the view (a filter expression)"
        case .searchNext: "next search match"
        case .searchPrevious: "previous search match"
        case .toggleMark: "mark or unmark the flow"
        case .deleteFlow: "delete the flow"
        case .clearAll: "delete all flows (asks first)"
        case .exportHAR: "export the filtered or marked flows as HAR"
        case .saveCurl: "save the flow as a curl command"
        case .replay: "send the flow (or the marked flows) again: replay"
        case .editResend: "edit the request in $EDITOR, then send it"
        case .editIntercept: "breakpoints: stop exchanges matching a filter"
        case .nextHeld: "pick the next held exchange"
        case .acceptHeld: "accept the held exchange: it goes on"
        case .acceptAllHeld: "accept every held exchange"
        case .killHeld: "kill the held exchange (502, or reset)"
        case .copy: "copy: then u URL, c curl, b body, r raw request"
        case .showPins: "pinned domains"
        case .showInfo: "proxy info: how to send traffic, CA page, rules, files"
        case .showQRCode: "QR code of the CA page for a phone (←/→ another address)"
        case .showEventLog: "event log: the proxy's log lines"
        case .openDetail: "open the flow"
        case .detail(let action): action.description
        case .closeDetail: "back to the flow list"
        }
    }
}
