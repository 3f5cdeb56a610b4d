/// What the driver of an exchange must do next, as `ExchangeStateMachine` decided it.
///
/// Actions name decisions, not data: a body action ("send", "buffer", "hold", "capture") refers
/// to the part given with the event that returned it, and a head action to the head the driver
/// shapes from the plan it carries. Every request- and response-body action also captures the
/// part on the flow; a part that gets no action is dropped (the exchange is over).
///
/// A driver carries out the actions of one event in order and feeds nothing back until it has
/// finished them, except events the actions themselves cause (a write that fills the client's
/// buffer: `clientWritabilityChanged(false)`), which the machine's state already allows for.
public enum ExchangeAction: Hashable, Sendable {
    // MARK: routing and local answers

    /// Run the rules on the request and report what they decided with `routeDecided`.
    case route
    /// Answer the client's `Expect: 100-continue` with the proxy's own `100 Continue`.
    case writeContinue
    /// Get the local answer ready (open the map-local file) and report `localAnswerPrepared`.
    case prepareLocalAnswer
    /// Write the local answer (block text, map-local file); `close` goes in its `Connection`
    /// field. The driver reports `localAnswerFinished` or `localAnswerFailed`.
    case startLocalAnswer(close: Bool)
    /// Let go of a prepared local answer that will never be written (close its file).
    case discardLocalAnswer
    /// Capture the request-body part on the flow; nothing is forwarded (a local answer).
    case captureRequestBody

    // MARK: the upstream connection

    /// Take the client's bound connection or a pooled one (`allowReuse`), else open a new one;
    /// report `upstreamConnected`, or `upstreamConnecting` and later `upstreamConnected` or
    /// `upstreamConnectFailed`.
    case openUpstream(allowReuse: Bool)
    /// Send the request head as forwarded (rules applied, exactly one framing header).
    case sendRequestHead
    case sendRequestBody
    /// Keep the part until the connection is up (sent by `sendBufferedRequestBody`).
    case bufferRequestBody
    case sendBufferedRequestBody
    /// End the request (with the trailers that may be forwarded).
    case sendRequestEnd
    case flushUpstream
    case pauseUpstreamReads
    case resumeUpstreamReads
    /// Give the connection back (to the client's bound connections, or the shared pool) once
    /// the read that ended the response is over; the driver resumes its reads.
    case checkInUpstream(boundToClient: Bool)
    case closeUpstream
    /// The origin switched protocols (WebSocket): the response head and end are written; both
    /// connections become one byte relay. Reads paused on either side are over: the HTTP
    /// handlers that held them leave, and the relay reads both sides.
    case switchToByteRelay

    // MARK: holds (rewrite rules, breakpoints)

    /// The part joins the held request body (reported `requestHoldOverflowed` when too large).
    case holdRequestBody
    /// The whole request is held: rewrite it or park it, then report `requestReleased`,
    /// `holdAborted` or `holdTimedOut`.
    case requestHeld
    /// The held body (as released) goes ahead of anything buffered since.
    case bufferReleasedRequestBody
    /// Shape the client's response head from this plan, and keep it until it is written.
    case prepareResponseHead(ResponseHeadPlan)
    /// Decide whether to hold the prepared response; report `responseHoldDecided` before any
    /// other event (the response's body and end are not taken until then).
    case decideResponseHold
    case writeResponseHead
    case holdResponseBody
    /// The whole response is held: rewrite it or park it, then report `responseReleased`,
    /// `holdAborted` or `holdTimedOut`.
    case responseHeld
    /// Write the held body parts as they arrived (a hold given up because it grew too large).
    case writeHeldResponseBody
    /// Write the released response (its head and body as released).
    case writeReleasedResponse

    // MARK: the client

    /// Relay an interim (1xx) response head, without hop-by-hop fields.
    case writeInterimHead
    case writeResponseBody
    case flushClient
    case pauseClientReads(ClientReadPause)
    case resumeClientReads(ClientReadPause)
    /// End the response (with the origin's forwardable trailers); close the client connection
    /// if `close`. Whatever reads this exchange paused are over.
    case completeResponse(close: Bool, requestEnded: Bool)
    /// Answer with the proxy's own failure response (status and one-line reason), then as for
    /// `completeResponse` (closed unless `keepAlive`).
    case answer(ProxyFailure, keepAlive: Bool, requestEnded: Bool)
    /// Close the client connection now: part of a response already went out, or the client
    /// cannot be answered any more.
    case abortClient(reason: String)

    // MARK: work and capture

    /// Cancel off-loop work still queued for this exchange (a rewrite, a file read).
    case cancelWork
    /// Finish the flow and hand it to the capture: exactly once per exchange.
    case record(error: String?)
}

/// Why the machine holds the client's reads.
public enum ClientReadPause: Hashable, Sendable {
    /// A new upstream connection is being opened.
    case connecting
    /// The origin is not taking the request body as fast as the client sends it.
    case upstreamBusy
}

/// What the machine decided about a final response head; the driver shapes the head from it.
public struct ResponseHeadPlan: Hashable, Sendable {
    /// How the origin framed the body, and whether its framing fields pass as they are.
    public var framing: ResponseFraming.Decision
    /// The client connection closes after this response.
    public var close: Bool
    /// A `101` the client asked for: the connection becomes a byte relay after it.
    public var switchingProtocols: Bool

    public init(framing: ResponseFraming.Decision, close: Bool, switchingProtocols: Bool) {
        self.framing = framing
        self.close = close
        self.switchingProtocols = switchingProtocols
    }
}

/// Action lists returned as they are by the common events, made once so those events allocate
/// nothing. Lists that depend on state are built where they are decided.
enum CommonActions {
    static let route: [ExchangeAction] = [.route]
    static let openPooledOrNew: [ExchangeAction] = [.openUpstream(allowReuse: true)]
    static let sendBody: [ExchangeAction] = [.sendRequestBody]
    static let sendEnd: [ExchangeAction] = [.sendRequestEnd, .flushUpstream]
    static let flushUpstream: [ExchangeAction] = [.flushUpstream]
    static let writeBody: [ExchangeAction] = [.writeResponseBody]
    static let flushClient: [ExchangeAction] = [.flushClient]
    static let sendHead: [ExchangeAction] = [.sendRequestHead, .flushUpstream]
    static let sendHeadResumingReads: [ExchangeAction] = sendHead + [.resumeClientReads(.connecting)]
    static let sendWholeRequest: [ExchangeAction] = [.sendRequestHead, .sendRequestEnd, .flushUpstream]
    static let sendWholeRequestResumingReads: [ExchangeAction] = sendWholeRequest + [.resumeClientReads(.connecting)]
    static let checkInAndComplete: [ExchangeAction] = [
        .checkInUpstream(boundToClient: false), .record(error: nil), .completeResponse(close: false, requestEnded: true),
    ]
}
