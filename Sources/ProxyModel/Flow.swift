import Foundation

/// What kind of exchange a flow records.
public enum FlowKind: String, Sendable, Hashable, CaseIterable {
    /// An HTTP request and (maybe) its response, decoded.
    case http
    /// A CONNECT tunnel relayed as opaque bytes.
    case tunnel
}

/// One captured exchange: everything the proxy saw of a request, its response and its timing.
///
/// This is the vocabulary shared by the engine (which fills it in), the capture store (which
/// persists it) and every reader (CLI, TUI, export). It is a plain value with no I/O.
public struct Flow: Sendable, Hashable {
    /// Assigned by the capture store; nil until stored.
    public var id: Int64?
    public var kind: FlowKind
    /// The client's address as `ip:port`.
    public var clientAddress: String
    public var startedAt: Date
    public var finishedAt: Date?
    public var timings: FlowTimings

    public var method: String
    /// `http` or `https`; `tcp` for tunnels (opaque bytes, whatever the protocol inside).
    public var scheme: String
    public var host: String
    public var port: Int
    /// Path and query as requested (`/search?q=1`); empty for tunnels.
    public var path: String
    /// `HTTP/1.1`, `HTTP/1.0`, …
    public var httpVersion: String
    public var requestHeaders: [HeaderField]
    public var requestBody: CapturedBody

    /// Response status; nil when no response arrived.
    public var status: Int?
    public var reason: String?
    public var responseHeaders: [HeaderField]
    public var responseBody: CapturedBody

    /// Why the exchange failed, if it did, in one line.
    public var error: String?
    /// Bytes relayed client → server and server → client (tunnels and upgraded connections).
    public var bytesUp: Int64
    public var bytesDown: Int64
    public var marked: Bool

    /// What was negotiated on both TLS legs of an intercepted exchange; nil for plain HTTP and
    /// for tunnels that were passed through without interception.
    public var tls: TLSDetails?
    /// The origin's IP address as connected (`93.184.216.34`, `::1`), without the port; nil when
    /// no upstream connection was made (an answer from the proxy itself, a failed lookup) or not
    /// known (flows imported from other tools that left it out).
    public var serverAddress: String?
    /// A short remark shown with the flow (why a tunnel was passed through, say:
    /// "pinned: client rejected the certificate (unknown_ca alert)"); nil normally.
    public var note: String?

    /// Adds `remark` to `note`, after what it already says (`; ` between).
    public mutating func appendNote(_ remark: String) {
        note = note.map { $0 + "; " + remark } ?? remark
    }
    /// The names of the rules (from the rules file) that acted on this exchange, in the order
    /// they acted: a block, a map-local or map-remote, a DNS override, a rewrite, or an
    /// `ssl_proxying` exclusion. Empty when no rule touched it.
    public var appliedRules: [String]
    /// The request as forwarded to the origin, when a rule changed it; nil otherwise (the
    /// request fields above are always the client's).
    public var forwardedRequest: ForwardedRequest? {
        get { forwardedRequestPart.part }
        set { forwardedRequestPart.part = newValue }
    }
    private var forwardedRequestPart: OutOfLine<ForwardedRequest>
    /// The response as the origin sent it, when a rule changed it; nil otherwise (the response
    /// fields above are always what the client got).
    public var originResponse: OriginResponse? {
        get { originResponsePart.part }
        set { originResponsePart.part = newValue }
    }
    private var originResponsePart: OutOfLine<OriginResponse>
    /// Fields the origin sent after the response body (gRPC's `grpc-status`), as relayed; empty
    /// when there were none.
    public var responseTrailers: [HeaderField]
    /// The HTTP/2 stream that carried the exchange on the client's connection (the connection is
    /// `clientAddress`); nil for HTTP/1.
    public var streamID: Int?
    /// WebSocket messages captured on this flow so far (they are read apart: `messages`).
    public var messageCount: Int
    /// The messages themselves when they travel with the flow (HAR export and import); nil
    /// otherwise: the capture stores and reads them apart (`TrafficRepository.messages`).
    public var webSocketMessages: [CapturedMessage]?
    /// The flow this one sent again (`r` in the TUI, `proxyapp replay`, an edit and resend):
    /// its id; nil for traffic a client sent.
    public var replayOf: Int64?
    /// The proxy that captured the flow, in a capture shared by several (`run --store … --name`);
    /// nil in a proxy's own capture. Not an `init` parameter: only the shared store sets it.
    public var proxyName: String?

    public init(
        id: Int64? = nil, kind: FlowKind = .http, clientAddress: String = "", startedAt: Date = Date(),
        finishedAt: Date? = nil, timings: FlowTimings = FlowTimings(), method: String = "GET",
        scheme: String = "http", host: String = "", port: Int = 80, path: String = "/",
        httpVersion: String = "HTTP/1.1", requestHeaders: [HeaderField] = [],
        requestBody: CapturedBody = .empty, status: Int? = nil, reason: String? = nil,
        responseHeaders: [HeaderField] = [], responseBody: CapturedBody = .empty, error: String? = nil,
        bytesUp: Int64 = 0, bytesDown: Int64 = 0, marked: Bool = false, tls: TLSDetails? = nil,
        note: String? = nil, serverAddress: String? = nil, appliedRules: [String] = [],
        forwardedRequest: ForwardedRequest? = nil, originResponse: OriginResponse? = nil,
        responseTrailers: [HeaderField] = [], streamID: Int? = nil, messageCount: Int = 0,
        replayOf: Int64? = nil
    ) {
        self.id = id
        self.kind = kind
        self.clientAddress = clientAddress
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.timings = timings
        self.method = method
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.httpVersion = httpVersion
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.status = status
        self.reason = reason
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.error = error
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.marked = marked
        self.tls = tls
        self.note = note
        self.serverAddress = serverAddress
        self.appliedRules = appliedRules
        forwardedRequestPart = OutOfLine(forwardedRequest)
        originResponsePart = OutOfLine(originResponse)
        self.responseTrailers = responseTrailers
        self.streamID = streamID
        self.messageCount = messageCount
        self.webSocketMessages = nil
        self.replayOf = replayOf
    }

    /// Total duration in milliseconds, when the flow has finished.
    public var durationMilliseconds: Double? {
        finishedAt.map { $0.timeIntervalSince(startedAt) * 1000 }
    }

    /// The host as it appears in a URL or a Host header: an IPv6 literal in brackets (`[::1]`).
    public var urlHost: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    }

    /// The URL as a user would type it (`http://host:8080/path`), default ports omitted.
    public var url: String {
        let defaultPort = (scheme == "https" && port == 443) || (scheme == "http" && port == 80)
        return "\(scheme)://\(urlHost)\(defaultPort ? "" : ":\(port)")\(path)"
    }
}

/// Where the engine hands finished flows. Implementations must return at once: they are called
/// on an event loop and must never block or touch the disk there.
public protocol FlowSink: Sendable {
    func record(_ flow: consuming Flow)

    /// Records a flow that goes on (a WebSocket after its `101`): its messages follow through
    /// `append(_:to:)` and its end through `finish(_:with:)`, under the key returned. Nil when the
    /// sink keeps no messages (the flow is recorded as it is).
    func recordOpen(_ flow: Flow) -> OpenFlowKey?

    /// Adds messages to an open flow (dropped when its flow was).
    func append(_ messages: [CapturedMessage], to key: OpenFlowKey)

    /// The open flow ended: its counts and end time are updated, and the key is let go.
    func finish(_ key: OpenFlowKey, with end: OpenFlowEnd)
}

extension FlowSink {
    public func recordOpen(_ flow: Flow) -> OpenFlowKey? {
        record(flow)
        return nil
    }

    public func append(_ messages: [CapturedMessage], to key: OpenFlowKey) {}

    public func finish(_ key: OpenFlowKey, with end: OpenFlowEnd) {}
}
