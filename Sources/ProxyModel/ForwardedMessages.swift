import Foundation

/// The request as the proxy forwarded it to the origin, kept only when a rule changed it
/// (map-remote, rewrite of headers or body).
///
/// A flow's own request fields are the request as the client sent it; without this a rewrite is
/// invisible in the capture. `body` nil means the body went out as the client sent it.
public struct ForwardedRequest: Sendable, Hashable {
    public var method: String
    public var scheme: String
    public var host: String
    public var port: Int
    /// Path and query as forwarded.
    public var path: String
    public var headers: [HeaderField]
    /// The body as forwarded (capped like every captured body); nil when unchanged.
    public var body: CapturedBody?

    public init(method: String, scheme: String, host: String, port: Int, path: String,
                headers: [HeaderField], body: CapturedBody? = nil) {
        self.method = method
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// The response as the origin sent it, kept only when a rule changed what the client got
/// (a rewrite of the status, headers or body).
///
/// A flow's own response fields are the response as the client got it. `body` nil means the
/// client got the origin's body unchanged.
public struct OriginResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String?
    public var headers: [HeaderField]
    /// The body as the origin sent it (capped); nil when unchanged.
    public var body: CapturedBody?

    public init(status: Int, reason: String?, headers: [HeaderField], body: CapturedBody? = nil) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }
}

extension Flow {
    /// Whether a rule changed the request or the response: the flow has an origin side.
    public var hasOriginSide: Bool {
        forwardedRequest != nil || originResponse != nil
    }

    /// Bytes held in memory by all of the flow's bodies, the origin side's included: what
    /// queues and batches count against their memory bounds (a spooled body's blocks are in
    /// its spool, not here).
    public var capturedBodyBytes: Int {
        requestBody.heldCount + responseBody.heldCount + (forwardedRequest?.body?.heldCount ?? 0)
            + (originResponse?.body?.heldCount ?? 0)
    }

    /// The exchange as the origin saw it: the request as forwarded and the response as the
    /// origin sent it, each where a rule changed it, else the client's. Readers that show or
    /// export one side at a time (the detail view, curl) take this flow instead of the client's.
    public var originSide: Flow {
        var side = self
        side.forwardedRequest = nil
        side.originResponse = nil
        if let request = forwardedRequest {
            side.method = request.method
            side.scheme = request.scheme
            side.host = request.host
            side.port = request.port
            side.path = request.path
            side.requestHeaders = request.headers
            if let body = request.body { side.requestBody = body }
        }
        if let response = originResponse {
            side.status = response.status
            side.reason = response.reason
            side.responseHeaders = response.headers
            if let body = response.body { side.responseBody = body }
        }
        return side
    }
}
