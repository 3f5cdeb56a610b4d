import Foundation
import ProxyModel
import RequestComposer

/// Breakpoints as the TUI reaches them: in the proxy's own process, or through the control
/// channel of the proxy a `proxyapp tui` is attached to. Blocking calls: the controller makes
/// them on a worker lane, never while drawing.
public struct TUIBreakpoints: Sendable {
    public typealias Held = HeldExchange

    /// The filter in force (nil: none) and what is held, oldest first.
    public struct State: Sendable, Hashable {
        public var filter: String?
        public var held: [Held]

        public init(filter: String? = nil, held: [Held] = []) {
            self.filter = filter
            self.held = held
        }
    }

    /// nil when the proxy cannot be asked (an attached TUI whose proxy stopped).
    public var state: @Sendable () -> State?
    /// Sets the filter (nil or empty clears it); the reason when it is refused.
    public var setFilter: @Sendable (String?) -> String?
    /// Accepts (true) or kills (false) one held exchange; false when it is no longer held.
    public var decide: @Sendable (_ id: Int, _ accept: Bool) -> Bool
    /// Accepts every held exchange; how many.
    public var acceptAll: @Sendable () -> Int
    /// A held request as it will be forwarded (nil: not held, or a response), for `R`.
    public var heldRequest: @Sendable (Int) -> TUIComposedRequest?
    /// Lets a held request go on as edited: nil when it did, else why not in words (no longer
    /// held, its host changed, the proxy refused it).
    public var edit: @Sendable (Int, TUIComposedRequest) -> String?
    /// A held response as the client will get it (nil: not held, or a request), for `R`.
    public var heldResponse: @Sendable (Int) -> ComposedResponse?
    /// Sends the edited response to the client of a held one: nil when it did, else why not.
    public var editResponse: @Sendable (Int, ComposedResponse) -> String?

    public init(state: @escaping @Sendable () -> State?, setFilter: @escaping @Sendable (String?) -> String?,
                decide: @escaping @Sendable (Int, Bool) -> Bool, acceptAll: @escaping @Sendable () -> Int,
                heldRequest: @escaping @Sendable (Int) -> TUIComposedRequest? = { _ in nil },
                edit: @escaping @Sendable (Int, TUIComposedRequest) -> String? = { _, _ in "editing is not available here" },
                heldResponse: @escaping @Sendable (Int) -> ComposedResponse? = { _ in nil },
                editResponse: @escaping @Sendable (Int, ComposedResponse) -> String? = { _, _ in "editing is not available here" }) {
        self.heldResponse = heldResponse
        self.editResponse = editResponse
        self.state = state
        self.setFilter = setFilter
        self.decide = decide
        self.acceptAll = acceptAll
        self.heldRequest = heldRequest
        self.edit = edit
    }
}
