/// One exchange — a request and its response — as a sans-IO state machine: events in, actions
/// out (`ExchangeAction`), no NIO, no I/O, no clock.
///
/// It makes every decision of an exchange's life: how the request is framed (RFC 9112 §6,
/// `RequestFraming`; refused here, before rules or origin see it), when the upstream connection
/// is opened, taken or retried, what is sent, buffered or held, how each response head is
/// judged (`ResponseFraming`, interim responses, upgrades), when the client connection must
/// close, when reads pause and resume on either side, what goes back to the pool, when the flow
/// is recorded (exactly once), and how each failure is answered. The driver carries the actions
/// out with real connections (`ExchangeDriver` for an HTTP/1 client connection); the machine
/// does not know what its client side is (an HTTP/1 connection, an HTTP/2 stream, or none at
/// all for a replay), which is why it can be tested alone, event by event.
///
/// Life of an exchange: `start` (framing) → `route` → `routeDecided` → forwarding (connect,
/// request, response) or a local answer (block, map-local) → finished. A hold (a rewrite rule
/// or a breakpoint) parks the whole request after its end, or the whole response after its end,
/// until `requestReleased`/`responseReleased`, `holdAborted` or `holdTimedOut`.
///
/// The shape follows SwiftNIO's typed state machines (`NIOTypedHTTPServerUpgraderStateMachine`)
/// and mitmproxy's sans-IO layers. Events that arrive after the exchange finished return no
/// actions, except those that hand back a resource (a late connection: `closeUpstream`).
public struct ExchangeStateMachine: Hashable, Sendable {
    /// What the machine needs to know about the client's request head.
    public struct Request: Hashable, Sendable {
        public var method: String
        public var majorVersion: Int
        public var minorVersion: Int
        /// The client's connection may carry another request after this one.
        public var keepAlive: Bool
        /// `Expect: 100-continue`.
        public var expectsContinue: Bool
        /// The request has an `Upgrade` field (NIO's decoder reads nothing after it).
        public var asksUpgrade: Bool

        public init(method: String, majorVersion: Int, minorVersion: Int, keepAlive: Bool,
                    expectsContinue: Bool, asksUpgrade: Bool) {
            self.method = method
            self.majorVersion = majorVersion
            self.minorVersion = minorVersion
            self.keepAlive = keepAlive
            self.expectsContinue = expectsContinue
            self.asksUpgrade = asksUpgrade
        }

        var isHTTP10: Bool { majorVersion < 1 || (majorVersion == 1 && minorVersion == 0) }
        /// HTTP/1.1 and later (HTTP/2 streams included) understand interim (1xx) responses, and
        /// so `Expect: 100-continue` (RFC 9110 §10.1.1: ignored from an HTTP/1.0 client).
        var understandsInterim: Bool { majorVersion > 1 || (majorVersion == 1 && minorVersion >= 1) }
        var isHead: Bool { method == "HEAD" }
        /// Safe methods (RFC 9110 §9.2.1), stricter than idempotent: only these are ever sent
        /// twice (after a pooled connection turned out closed), so nothing changes twice.
        var isSafe: Bool {
            switch method {
            case "GET", "HEAD", "OPTIONS", "TRACE": return true
            default: return false
            }
        }
    }

    /// How a forwarded exchange goes, as the rules decided it.
    public struct Forwarding: Hashable, Sendable {
        /// The origin (for the reasons in failures).
        public var host: String
        public var port: Int
        /// The request's upgrade (WebSocket) is forwarded: its connection cannot be pooled.
        public var forwardsUpgrade: Bool
        /// The request is held whole before it is sent (a rewrite of its body, a breakpoint).
        public var holdsRequest: Bool
        /// The response may be held whole (decided per response with `responseHoldDecided`).
        public var mayHoldResponse: Bool

        public init(host: String, port: Int, forwardsUpgrade: Bool = false, holdsRequest: Bool = false,
                    mayHoldResponse: Bool = false) {
            self.host = host
            self.port = port
            self.forwardsUpgrade = forwardsUpgrade
            self.holdsRequest = holdsRequest
            self.mayHoldResponse = mayHoldResponse
        }
    }

    /// What the rules decided for the request (`routeDecided`).
    public enum Route: Hashable, Sendable {
        case forward(Forwarding)
        /// Answered by the proxy (block, map-local); `needsPreparation` when a file must be
        /// opened first.
        case answerLocally(needsPreparation: Bool)
        /// Refused with this failure (a scheme the proxy cannot forward, say).
        case refuse(ProxyFailure)
    }

    public enum Phase: Hashable, Sendable {
        case awaitingStart
        case routing
        case forwarding
        case answeringLocally
        case finished
    }

    enum RequestState: Hashable {
        case streaming
        /// The body goes into the hold.
        case holding
        /// Ended while held: waiting for `requestReleased`.
        case awaitingRelease
        case ended
    }

    enum UpstreamState: Hashable {
        case notOpened
        case opening
        case connected(reused: Bool)
        case gone
    }

    enum ResponseState: Hashable {
        case awaitingHead
        case awaitingHoldDecision
        case holding
        /// Ended while held: waiting for `responseReleased`.
        case awaitingRelease
        case streaming
        case ended
    }

    /// More interim responses than any real origin sends before its final one (102 Processing
    /// floods): past this the origin is cut off with a 502.
    public static let maxInterimResponses = 32

    public let request: Request
    public internal(set) var phase: Phase = .awaitingStart
    /// How the request body is framed upstream; set by a successful `start`.
    public internal(set) var requestFraming: RequestFraming.Decision?
    /// The plan for the final response head, once one arrived.
    public internal(set) var responsePlan: ResponseHeadPlan?
    var forwarding: Forwarding?
    var requestState: RequestState = .streaming
    var upstream: UpstreamState = .notOpened
    var response: ResponseState = .awaitingHead
    /// The request's end went upstream.
    var requestWritten = false
    var requestHadBody = false
    var hasBufferedBody = false
    /// The connection is bound to this client (NTLM, Negotiate): it never joins the shared pool.
    var boundToClient = false
    var originKeepAlive = false
    var interimResponses = 0
    var responseHeadReceived = false
    var responseHeadWritten = false
    /// Part of a response (an interim one included) reached the client: never send again.
    var clientSawResponse = false
    /// The proxy answered `100-continue` itself (a held request body).
    var answeredContinue = false
    var pausedForConnecting = false
    var pausedForUpstreamBusy = false
    var upstreamReadsPaused = false
    var inputClosed = false
    /// Off-loop work may be queued (a hold's rewrite, a local answer's file).
    var hasWork = false
    var localPrepared = false
    var localResponding = false

    public init(request: Request) {
        self.request = request
    }

    /// The request's end has been read.
    public var requestEnded: Bool { requestState == .awaitingRelease || requestState == .ended }

    /// The exchange waits for more of the request body from the client (its stall is the
    /// client's, or a busy origin's), not for a connection being opened.
    public var awaitsClientBody: Bool {
        switch phase {
        case .forwarding: return (requestState == .streaming || requestState == .holding) && upstream != .opening
        case .answeringLocally: return !requestEnded
        default: return false
        }
    }

    /// A local answer is being written (its writes must keep moving).
    public var isWritingLocalAnswer: Bool { phase == .answeringLocally && localResponding }

    /// The request is held whole, waiting for a release (a rewrite or a breakpoint).
    public var holdsRequest: Bool { requestState == .holding || requestState == .awaitingRelease }

    // MARK: the request head and the rules

    /// The request head was read: its framing is decided here, before anything else sees it.
    /// - Parameter fields: the head's fields as parsed.
    /// Inlinable so that the scan of `fields` is specialized for the caller's header list.
    @inlinable
    public mutating func start<Fields: Sequence>(fields: Fields) -> [ExchangeAction]
        where Fields.Element == (name: String, value: String) {
        start(framingFields: FramingFields(fields))
    }

    @usableFromInline
    mutating func start(framingFields: FramingFields) -> [ExchangeAction] {
        guard phase == .awaitingStart else { return [] }
        switch RequestFraming.decide(framingFields, method: request.method, isHTTP10: request.isHTTP10) {
        case .success(let decision):
            requestFraming = decision
            phase = .routing
            return CommonActions.route
        case .failure(let refusal):
            let failure: ProxyFailure = refusal.statusCode == 501 ? .notImplemented(reason: refusal.reason)
                : .badRequest(reason: refusal.reason)
            phase = .finished
            // The rest of the connection's bytes cannot be trusted to start a new request.
            return [.record(error: failure.message), .answer(failure, keepAlive: false, requestEnded: false)]
        }
    }

    public mutating func routeDecided(_ route: Route) -> [ExchangeAction] {
        guard phase == .routing else { return [] }
        switch route {
        case .refuse(let failure):
            phase = .finished
            return [.record(error: failure.message), .answer(failure, keepAlive: false, requestEnded: false)]
        case .answerLocally(let needsPreparation):
            phase = .answeringLocally
            hasWork = true
            localPrepared = !needsPreparation
            var actions: [ExchangeAction] = []
            // The client waits for it before sending the body the answer does not need.
            if request.expectsContinue && request.understandsInterim { actions.append(.writeContinue) }
            if needsPreparation { actions.append(.prepareLocalAnswer) }
            return actions
        case .forward(let forwarding):
            phase = .forwarding
            self.forwarding = forwarding
            hasWork = forwarding.holdsRequest || forwarding.mayHoldResponse
            if forwarding.holdsRequest && !forwarding.forwardsUpgrade {
                // Sent only once whole: a connection taken now would sit idle (and may close).
                requestState = .holding
                if request.expectsContinue && request.understandsInterim {
                    answeredContinue = true
                    return [.writeContinue]
                }
                return []
            }
            return CommonActions.openPooledOrNew
        }
    }

    // MARK: from the client

    public mutating func clientBody() -> [ExchangeAction] {
        switch phase {
        case .forwarding:
            requestHadBody = true
            switch requestState {
            case .holding:
                return [.holdRequestBody]
            case .streaming:
                switch upstream {
                case .connected:
                    return CommonActions.sendBody
                case .gone:
                    // The origin answered before the body ended (its response is held): nothing
                    // will send this part, and the client's connection closes after the response.
                    return [.captureRequestBody]
                case .notOpened, .opening:
                    hasBufferedBody = true
                    return [.bufferRequestBody]
                }
            case .awaitingRelease, .ended:
                return []
            }
        case .answeringLocally:
            return requestEnded ? [] : [.captureRequestBody]
        case .awaitingStart, .routing, .finished:
            return []
        }
    }

    public mutating func clientEnd() -> [ExchangeAction] {
        switch phase {
        case .forwarding:
            switch requestState {
            case .holding:
                requestState = .awaitingRelease
                return [.requestHeld]
            case .streaming:
                requestState = .ended
                guard case .connected = upstream else { return [] }  // sent once connected
                requestWritten = true
                return CommonActions.sendEnd
            case .awaitingRelease, .ended:
                return []
            }
        case .answeringLocally:
            guard !requestEnded else { return [] }
            requestState = .ended
            return respondLocallyIfReady()
        case .awaitingStart, .routing, .finished:
            return []
        }
    }

    /// The client's read is over: what it carried goes upstream now.
    public mutating func clientReadComplete() -> [ExchangeAction] {
        guard phase == .forwarding, case .connected = upstream else { return [] }
        return CommonActions.flushUpstream
    }

    public mutating func clientWritabilityChanged(isWritable: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, case .connected = upstream else { return [] }
        if isWritable {
            guard upstreamReadsPaused else { return [] }
            upstreamReadsPaused = false
            return [.resumeUpstreamReads]
        }
        guard !upstreamReadsPaused else { return [] }
        upstreamReadsPaused = true
        return [.pauseUpstreamReads]
    }

    /// The client half-closed: nothing more will be read, so no response keeps it open.
    public mutating func clientInputClosed() -> [ExchangeAction] {
        inputClosed = true
        return []
    }

    /// The client connection is gone.
    public mutating func clientClosed(reason: String) -> [ExchangeAction] {
        switch phase {
        case .finished:
            return []
        case .awaitingStart, .routing:
            phase = .finished
            return [.record(error: reason)]
        case .forwarding, .answeringLocally:
            var actions = finishing()
            actions.append(.record(error: reason))
            return actions
        }
    }

    /// The request turned out malformed after its head (a bad chunk, say): answered and closed
    /// while no response has begun, else the connection is cut.
    public mutating func requestFailed(_ failure: ProxyFailure) -> [ExchangeAction] {
        switch phase {
        case .finished:
            return []
        case .awaitingStart, .routing:
            phase = .finished
            return [.record(error: failure.message), .answer(failure, keepAlive: false, requestEnded: false)]
        case .forwarding where responseHeadWritten, .answeringLocally where localResponding:
            var actions = finishing()
            actions += [.record(error: failure.message), .abortClient(reason: failure.message)]
            return actions
        case .forwarding, .answeringLocally:
            return fail(failure, closeClient: true)
        }
    }

    /// The request body did not move for the client idle timeout: the client stopped sending
    /// (408) or, with its reads held because the origin took nothing, the origin stopped
    /// reading (504). Either way the connection closes: the rest of the body is not coming.
    public mutating func requestStalled(seconds: Int64) -> [ExchangeAction] {
        guard awaitsClientBody else { return [] }
        if phase == .forwarding, pausedForUpstreamBusy, let forwarding {
            return fail(.upstreamStalledReading(host: forwarding.host, port: forwarding.port, seconds: seconds),
                        closeClient: true)
        }
        return fail(.requestBodyTimeout(seconds: seconds), closeClient: true)
    }

    // MARK: finishing

    /// Ends the exchange: cancels its work, gives up what it holds, and returns the actions
    /// for that (the caller adds the record and the client's fate).
    mutating func finishing() -> [ExchangeAction] {
        var actions: [ExchangeAction] = []
        if hasWork { actions.append(.cancelWork) }
        if phase == .answeringLocally && localPrepared { actions.append(.discardLocalAnswer) }
        if case .connected = upstream { actions.append(.closeUpstream) }
        if upstream != .notOpened { upstream = .gone }
        phase = .finished
        pausedForConnecting = false
        pausedForUpstreamBusy = false
        upstreamReadsPaused = false
        return actions
    }

    /// Fails the exchange: the client gets `failure` as an answer while no response has begun,
    /// else its connection is cut after what was written. Recorded with the reason.
    mutating func fail(_ failure: ProxyFailure, closeClient: Bool = false) -> [ExchangeAction] {
        let keepAlive = request.keepAlive && !(forwarding?.forwardsUpgrade ?? false) && !closeClient
            && !(phase == .answeringLocally)
        var actions = finishing()
        if responseHeadWritten {
            // What was written goes out first, so the client sees the truncated response the
            // flow records.
            actions += [.record(error: "\(failure.message) (response incomplete)"), .flushClient,
                        .abortClient(reason: failure.message)]
        } else {
            actions += [.record(error: failure.message),
                        .answer(failure, keepAlive: keepAlive, requestEnded: requestEnded)]
        }
        return actions
    }
}
