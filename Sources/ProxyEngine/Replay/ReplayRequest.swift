import ProxyModel

/// A request to send through the engine without a client: a captured flow sent again, or one a
/// person wrote (`proxyapp send`, `import --curl`, an edit and resend).
public struct ReplayRequest: Sendable, Hashable {
    public var method: String
    /// Absolute: `http://…` or `https://…` (an `https://` one goes to the origin over TLS).
    public var url: String
    /// As the client sent them; framing fields are dropped (the replay frames the body itself)
    /// and so are hop-by-hop ones the proxy would drop anyway.
    public var headers: [HeaderField]
    public var body: [UInt8]
    /// The flow this sends again; its new flow links to it (`Flow.replayOf`).
    public var replayOf: Int64?

    public init(method: String, url: String, headers: [HeaderField], body: [UInt8], replayOf: Int64? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.replayOf = replayOf
    }

    /// The flow's request as its client sent it (not a rule's forwarded version: rules run
    /// again on the replay unless turned off).
    public init(flow: Flow) {
        self.init(method: flow.method, url: flow.url, headers: flow.requestHeaders,
                  body: [UInt8](flow.requestBody.bytes), replayOf: flow.id)
    }
}

/// What came back for one `ReplayRequest`.
public struct ReplayOutcome: Sendable, Hashable {
    /// nil when no response came (`failure` says why).
    public var status: Int?
    public var reason: String
    public var headers: [HeaderField]
    /// The body's first bytes, up to what the caller asked to keep.
    public var body: [UInt8]
    /// The whole body's size.
    public var bodySize: Int
    /// Why no response came: a sentence, never a library's error text.
    public var failure: String?
    /// From the request's start to the response's end.
    public var milliseconds: Double

    public init(status: Int? = nil, reason: String = "", headers: [HeaderField] = [], body: [UInt8] = [],
                bodySize: Int = 0, failure: String? = nil, milliseconds: Double = 0) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.bodySize = bodySize
        self.failure = failure
        self.milliseconds = milliseconds
    }
}
