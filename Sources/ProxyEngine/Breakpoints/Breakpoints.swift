import Atomics
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import ProxyModel

/// Breakpoints (mitmproxy's intercept, Charles's breakpoints): exchanges matching a filter stop
/// whole — the request before it leaves, the response before it reaches the client — until a
/// person accepts or kills them, or the hold times out and they continue unchanged.
///
/// This is the one place that knows what is held. Exchanges register here from their event
/// loops (`ExchangeDriver+Breakpoints`) with a callback that carries the decision back to their
/// loop; the TUI, the control channel and tests list and decide through it from any thread.
/// Holding parks an exchange in the machine's hold state: no thread waits, other exchanges go
/// on, and the client's idle timeout does not run while the exchange is held.
public final class Breakpoints: Sendable {
    /// Which flows stop: true for a flow as it is when asked (request only, or with its
    /// response head). Given by whoever reads the filter language (`proxyapp`'s FlowFilter).
    public typealias Matcher = @Sendable (Flow) -> Bool
    /// What the filter will say of a flow once its response has come, from its request alone;
    /// nil when the response might change it (`FlowFilter.verdictBeforeResponse`).
    public typealias ResponseForecast = @Sendable (Flow) -> Bool?

    /// What the filter decided for an exchange whose request just arrived.
    struct RequestVerdict {
        /// The request stops before it is sent.
        var holdsRequest: Bool
        /// Its response: true holds it, false never (the exchange need not prepare for a hold),
        /// nil asks the filter again when the response head has come.
        var holdsResponse: Bool?
    }

    /// The side of an exchange held.
    public enum Side: String, Sendable, Hashable {
        case request
        case response
    }

    /// What a person decided for a held exchange.
    public enum Decision: Sendable, Hashable {
        /// Go on as it is.
        case accept
        /// A held request is answered 502; a held response resets the client's connection.
        case kill
        /// Nobody decided within the hold timeout: go on as it is, noted on the flow.
        case timedOut
        /// A held request goes on as a person edited it (same origin: the connection is chosen).
        case edit(HeldRequest)
        /// A held response reaches the client as a person edited it.
        case editResponse(HeldResponse)
    }

    /// A held request as an editor sees it and gives it back: as it will be forwarded.
    public struct HeldRequest: Sendable, Hashable {
        public var method: String
        /// Absolute (`https://host/path?query`): the origin it goes to cannot change.
        public var url: String
        public var headers: [HeaderField]
        public var body: [UInt8]

        public init(method: String, url: String, headers: [HeaderField], body: [UInt8]) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// A held response as an editor sees it and gives it back: as the client will get it.
    public struct HeldResponse: Sendable, Hashable {
        /// A final status, 200 to 599 (a held response cannot become an interim one).
        public var status: Int
        public var reason: String
        /// Framing (`Content-Length`, `Transfer-Encoding`) is the proxy's: such fields are dropped.
        public var headers: [HeaderField]
        public var body: [UInt8]

        public init(status: Int, reason: String, headers: [HeaderField], body: [UInt8]) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
        }
    }

    /// One held exchange as lists show it.
    public struct Held: Sendable, Hashable {
        public var id: Int
        public var side: Side
        public var method: String
        public var url: String
        /// The response's status (a held response); nil for a held request.
        public var status: Int?
        public var since: Date
    }

    private struct Entry {
        var held: Held
        var decide: @Sendable (Decision) -> Void
        /// A held request's content, made when an editor asks (the body is not copied per hold).
        var request: HeldContent<HeldRequest>?
        /// A held response's content, made when an editor asks.
        var response: HeldContent<HeldResponse>?
    }

    private struct State {
        var filter: (text: String, matches: Matcher, forecast: ResponseForecast?)?
        var entries: [Int: Entry] = [:]
        var nextID = 1
    }

    private let state = NIOLockedValueBox(State())
    /// Read on every exchange: a filter is set (one atomic load when there is none).
    private let active = ManagedAtomic(false)
    private let changes = ManagedAtomic(0)
    /// How long an exchange stays held before it goes on unchanged.
    public let timeout: TimeAmount

    public init(timeout: TimeAmount = .minutes(5)) {
        self.timeout = timeout
    }

    /// Sets the filter (its text, for lists and the header) or clears it (nil). Exchanges held
    /// already stay held; an exchange whose response `forecast` decided keeps that decision.
    public func setFilter(_ text: String?, matches: Matcher?, forecast: ResponseForecast? = nil) {
        state.withLockedValue { state in
            if let text, let matches { state.filter = (text, matches, forecast) } else { state.filter = nil }
        }
        active.store(text != nil && matches != nil, ordering: .releasing)
        changes.wrappingIncrement(ordering: .relaxed)
    }

    public var filterText: String? { state.withLockedValue { $0.filter?.text } }

    /// Counts every change (filter, holds added or decided): a UI redraws when it moves.
    public var changeCount: Int { changes.load(ordering: .relaxed) }

    /// Whether `flow` should stop here; false at once when no filter is set.
    func matches(_ flow: Flow) -> Bool {
        guard active.load(ordering: .acquiring) else { return false }
        guard let matches = state.withLockedValue({ $0.filter?.matches }) else { return false }
        return matches(flow)
    }

    /// Whether any filter is set (an exchange then may hold its response).
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Whether the request of `flow` stops, and what is known already of its response; nil when
    /// no filter is set.
    func verdict(onRequest flow: Flow) -> RequestVerdict? {
        guard active.load(ordering: .acquiring) else { return nil }
        guard let filter = state.withLockedValue({ $0.filter }) else { return nil }
        // A known forecast holds for every way the unknown predicates turn out, the request's own
        // moment included: then it answers for the request too, and the filter runs once.
        let forecast = filter.forecast?(flow)
        return RequestVerdict(holdsRequest: forecast ?? filter.matches(flow), holdsResponse: forecast)
    }

    /// Registers a held exchange; `decide` runs once, with the first decision (a person's or the
    /// timeout's), on whatever thread decided: the caller hops to its loop.
    func hold(side: Side, method: String, url: String, status: Int?, request: HeldContent<HeldRequest>? = nil,
              response: HeldContent<HeldResponse>? = nil, decide: @escaping @Sendable (Decision) -> Void) -> Int {
        let id = state.withLockedValue { state -> Int in
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(held: Held(id: id, side: side, method: method, url: url, status: status, since: Date()),
                                      decide: decide, request: request, response: response)
            return id
        }
        changes.wrappingIncrement(ordering: .relaxed)
        return id
    }

    /// Every held exchange, oldest first.
    public func held() -> [Held] {
        state.withLockedValue { $0.entries.values.map(\.held) }.sorted { $0.id < $1.id }
    }

    /// The request held as `id`, as it will be forwarded (nil: not held, or a response).
    public func heldRequest(_ id: Int) -> HeldRequest? {
        state.withLockedValue { $0.entries[id]?.request }?.make()
    }

    /// The response held as `id`, as the client will get it (nil: not held, or a request).
    public func heldResponse(_ id: Int) -> HeldResponse? {
        state.withLockedValue { $0.entries[id]?.response }?.make()
    }

    /// Decides for one held exchange; false when it is no longer held, or an edit does not fit
    /// it (a request's edit for a response, an origin changed, `problem(in:)` finds a fault).
    @discardableResult
    public func decide(_ id: Int, _ decision: Decision) -> Bool {
        switch decision {
        case .edit(let edited) where Self.problem(in: edited) != nil: return false
        case .editResponse(let edited) where Self.problem(in: edited) != nil: return false
        default: break
        }
        guard let entry = state.withLockedValue({ state -> Entry? in
            guard let entry = state.entries[id] else { return nil }
            switch decision {
            case .edit(let edited):
                guard let held = entry.request, URLOrigin.of(edited.url).lowercased() == held.origin.lowercased() else {
                    return nil
                }
            case .editResponse:
                guard entry.response != nil else { return nil }
            case .accept, .kill, .timedOut:
                break
            }
            return state.entries.removeValue(forKey: id)
        }) else { return false }
        changes.wrappingIncrement(ordering: .relaxed)
        entry.decide(decision)
        return true
    }

    /// Accepts every held exchange (quitting the TUI, `A`); returns how many.
    @discardableResult
    public func acceptAll() -> Int {
        let entries = state.withLockedValue { state -> [Entry] in
            defer { state.entries = [:] }
            return Array(state.entries.values)
        }
        if !entries.isEmpty { changes.wrappingIncrement(ordering: .relaxed) }
        for entry in entries { entry.decide(.accept) }
        return entries.count
    }

    /// Forgets a hold whose exchange ended by itself (its client left).
    func remove(_ id: Int) {
        if state.withLockedValue({ $0.entries.removeValue(forKey: id) }) != nil {
            changes.wrappingIncrement(ordering: .relaxed)
        }
    }

    /// Why an edited request cannot go on as written, in words; nil when it can. Front ends
    /// check their own grammar first: this guards the engine from any caller.
    public static func problem(in request: HeldRequest) -> String? {
        guard request.method.utf8.count <= 64, HTTPGrammar.isToken(request.method) else {
            return "the method is not an HTTP token (letters such as GET or POST)"
        }
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
              request.url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return "the URL must be absolute (http:// or https://) with no spaces or control characters"
        }
        let target = request.url.dropFirst(URLOrigin.of(request.url).count)
        guard target.isEmpty || target.hasPrefix("/"), !target.contains("#") else {
            return "the URL's path must start with / after the host, with no #fragment"
        }
        return problem(in: request.headers)
    }

    /// Why an edited response cannot reach the client as written, in words; nil when it can.
    public static func problem(in response: HeldResponse) -> String? {
        guard (200...599).contains(response.status) else {
            return "the status \(response.status) is not a final one: use 200 to 599"
        }
        guard response.reason.utf8.count <= 256, HTTPGrammar.isFieldValue(response.reason) else {
            return "the reason phrase holds a line break or control character"
        }
        return problem(in: response.headers)
    }

    private static func problem(in headers: [HeaderField]) -> String? {
        for field in headers {
            guard HTTPGrammar.isToken(field.name) else { return "a header name is not an HTTP token" }
            guard HTTPGrammar.isFieldValue(field.value) else { return "the \(field.name) header's value holds a line break or control character" }
        }
        return nil
    }
}

/// What an editor is shown of a held exchange, made only when asked: the held body stays in the
/// exchange's buffers until then. `origin` (a request's `scheme://host:port`) is what an edit may
/// not change.
struct HeldContent<Content: Sendable>: Sendable {
    var origin: String
    var make: @Sendable () -> Content
}
