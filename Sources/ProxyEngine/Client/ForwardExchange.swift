import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// One request forwarded to an origin and its response relayed back, streamed both ways with
/// back-pressure, and recorded as a flow.
///
/// Created by `ClientHTTPHandler` for each request the rules let through (to the URL's origin,
/// or where a map-remote rule sends it); it owns the upstream connection for the exchange's
/// lifetime and gives it back to the pool only after a clean, complete exchange. A rewrite
/// rule's edits are applied on the way; a body it rewrites is held whole (`ExchangeRewriter`).
/// Everything runs on the client channel's event loop.
final class ForwardExchange: UpstreamHTTPHandlerDelegate {
    unowned let client: ClientHTTPHandler
    let services: ProxyServices
    let pool: UpstreamConnectionPool
    let key: UpstreamConnectionPool.Key
    var recorder: ExchangeRecorder
    var upstreamHead: HTTPRequestHead
    let clientVersion: HTTPVersion
    private let clientKeepAlive: Bool
    private let isHeadRequest: Bool
    /// The request asks for a protocol upgrade (WebSocket) and the upgrade headers are forwarded.
    private let wantsUpgrade: Bool
    /// How to reach the origin over TLS (nil: plain HTTP).
    let upstreamTLS: UpstreamTLSTarget?
    /// A dns rule's addresses for the upstream connection.
    let addresses: [String]?
    let rewriter: ExchangeRewriter?
    /// Stops a held body's rewrite still queued or running once the client has gone (only
    /// exchanges with a rewrite have one).
    let workCancellation: WorkCancellation?

    var upstream: (channel: any Channel, handler: UpstreamHTTPHandler)?
    var usingPooledConnection = false
    /// The upstream connection is bound to this client (NTLM/Negotiate): it goes back to the
    /// client's private connections, never to the shared pool.
    var connectionBound = false
    /// `start` waits for a held request body to be released.
    var startDeferred = false
    /// The proxy answered the client's `Expect: 100-continue` itself (a held request body).
    var answeredContinue = false
    /// Request parts that arrived while the upstream connection was being opened.
    var pendingParts: [HTTPClientRequestPart] = []
    /// The request body held for a rewrite; nil when not holding (any more).
    var heldRequest: HeldBody?
    private var requestHadBody = false
    var requestEnded = false
    /// The request's trailers, kept so a retried request can be ended again.
    var requestTrailers: HTTPHeaders?
    var requestFullyWritten = false
    private var responseHeadReceived = false
    var responseHeadWritten = false
    /// The response held for a rewrite: its head as the client will get it, and the body so far.
    var heldResponse: (head: HTTPResponseHead, body: HeldBody)?
    private var upstreamKeepAlive = false
    /// How the origin framed the response body; one read until close never goes back to the pool.
    private var responseFraming: BodyFraming = .none
    /// Interim (1xx) responses seen so far; past `maxInterimResponses` the origin is cut off.
    var interimResponses = 0
    /// Part of a response (an interim one included) reached the client: the request may not be
    /// sent again.
    var clientSawResponse = false
    var closeClientAfterResponse = false
    private var switchingProtocols = false
    var finished = false
    /// The client left while a held response was being rewritten off the loop.
    var clientGoneWhileRewriting = false
    /// A rule changed the request's URL or headers: the flow keeps the request as forwarded.
    let requestChanged: Bool
    /// The origin's response head, kept while a rewrite may change the response (origin side).
    var originHead: HTTPResponseHead?
    /// A rewrite changed the response's status or headers.
    var responseHeadEdited = false

    init(client: ClientHTTPHandler, services: ProxyServices, pool: UpstreamConnectionPool, request: ClientRequest,
         target: UpstreamTarget, recorder: ExchangeRecorder, upstreamTLS: UpstreamTLSTarget?) {
        self.client = client
        self.services = services
        self.pool = pool
        self.upstreamTLS = upstreamTLS
        self.addresses = target.addresses
        self.key = .init(host: target.host, port: target.port, tls: upstreamTLS != nil, serverName: upstreamTLS?.serverName,
                         addressOverride: target.addresses?.joined(separator: ","))
        let head = request.head
        self.clientVersion = head.version
        self.clientKeepAlive = head.isKeepAlive
        self.isHeadRequest = head.method == .HEAD
        self.recorder = recorder
        for name in target.appliedRules {
            self.recorder.applied(rule: name, note: nil)
        }
        for note in target.notes {
            self.recorder.applied(rule: nil, note: note)
        }
        var (headers, upgrade) = Self.upstreamHeaders(from: head.headers, authority: target.authority,
                                                      framing: request.framing)
        self.wantsUpgrade = upgrade
        self.rewriter = target.rewrite.map {
            ExchangeRewriter(rule: $0, limit: max(services.configuration.maxCapturedBodyBytes, 1 << 20))
        }
        self.workCancellation = target.rewrite == nil ? nil : WorkCancellation()
        var headersEdited = false
        if let rewriter {
            let before = ExchangeRecorder.fields(headers)
            rewriter.editRequestHeaders(&headers)
            headersEdited = ExchangeRecorder.fields(headers) != before
            if rewriter.holdsRequestBody && !upgrade {
                heldRequest = HeldBody(limit: rewriter.limit)
                // The body is sent only once it is whole: nothing for the origin to continue.
                headers.remove(name: "expect")
                if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }),
                   head.version == .http1_1 {
                    client.write(.head(HTTPResponseHead(version: .http1_1, status: .continue)))
                    client.flush()
                    answeredContinue = true
                }
            }
        }
        self.upstreamHead = HTTPRequestHead(version: .http1_1, method: head.method, uri: target.pathAndQuery,
                                            headers: headers)
        self.requestChanged = headersEdited || Self.routedElsewhere(request, target)
        if requestChanged { recordForwardedRequest(body: nil) }
    }

    // MARK: from the client

    func clientBody(_ buffer: ByteBuffer) {
        guard !finished else { return }
        requestHadBody = true
        recorder.requestBody(buffer)
        if heldRequest != nil {
            holdRequestBody(buffer)
            return
        }
        sendBody(buffer)
    }

    private func sendBody(_ buffer: ByteBuffer) {
        if let upstream {
            upstream.handler.send(.body(.byteBuffer(buffer)))
            if !upstream.channel.isWritable {
                client.setReadsPaused(true, by: .upstreamBusy)
            }
        } else {
            pendingParts.append(.body(.byteBuffer(buffer)))
        }
    }

    func clientEnd(_ trailers: HTTPHeaders?) {
        guard !finished else { return }
        requestEnded = true
        requestTrailers = trailers.flatMap(TrailerFields.forwardable)
        if let held = heldRequest {
            rewriteHeldRequest(held)
            return
        }
        if let upstream {
            upstream.handler.send(.end(requestTrailers))
            upstream.handler.flush()
            markRequestWritten()
        }  // else `attach` ends the request once connected
    }

    func clientReadComplete() {
        upstream?.handler.flush()
    }

    func clientWritabilityChanged(isWritable: Bool) {
        if isWritable {
            upstream?.handler.resumeReads()
        }
    }

    /// Whether the client has sent its whole request.
    var isRequestComplete: Bool { requestEnded }

    /// The request body stopped moving for the client idle timeout: the client stopped
    /// sending (408) or, with reads held because the origin took nothing, the origin stopped
    /// reading (504). Either way the connection closes: the rest of the body is not coming.
    func requestStalled(originNotReading: Bool, seconds: Int64) {
        guard !finished else { return }
        fail(originNotReading
                ? .upstreamStalledReading(host: key.host, port: key.port, seconds: seconds)
                : .requestBodyTimeout(seconds: seconds),
             closeClient: true)
    }

    /// The client's request turned out malformed after its head (a bad chunk, say): answered
    /// with `failure` and closed while no response has begun, else the connection is cut.
    func requestFailed(_ failure: ProxyFailure) {
        guard !finished else { return }
        guard !responseHeadWritten else {
            client.abortConnection(reason: failure.message)
            return
        }
        fail(failure, closeClient: true)
    }

    /// The client went away before the exchange completed.
    func clientClosed(reason: String = "client closed the connection before the exchange completed") {
        workCancellation?.cancel()
        guard !finished else {
            if heldResponse != nil { clientGoneWhileRewriting = true }
            return
        }
        finished = true
        if let upstream {
            upstream.handler.delegate = nil
            upstream.channel.close(promise: nil)
            self.upstream = nil
        }
        services.sink.record(recorder.finish(error: reason))
    }

    // MARK: from the origin

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard !finished else { return }
        switch part {
        case .head(let head):
            // Taken for every head, in order, so the origin's phrases stay matched to heads.
            let status = upstream?.handler.statusWithOriginPhrase(head.status) ?? head.status
            if head.status.code < 100 {
                fail(.upstreamProtocolError(host: key.host, reason: "status \(head.status.code) is not an HTTP status code"))
                return
            }
            if head.status.code < 200 && head.status != .switchingProtocols {
                relayInterim(HTTPResponseHead(version: head.version, status: status, headers: head.headers))
                return
            }
            if head.status == .switchingProtocols && (!wantsUpgrade || !requestEnded) {
                // An upgrade nobody asked for, or one that cuts off a request body still being
                // sent: neither side could be relayed as bytes safely.
                fail(.upstreamProtocolError(
                    host: key.host,
                    reason: wantsUpgrade ? "switched protocols before the request body ended"
                        : "101 Switching Protocols for a request that did not ask to upgrade"))
                return
            }
            let framing: ResponseFraming.Decision
            switch ResponseFraming.decide(head.headers, status: Int(head.status.code), isHeadRequest: isHeadRequest) {
            case .success(let decision):
                framing = decision
            case .failure(let refusal):
                fail(.upstreamProtocolError(host: key.host, reason: refusal.reason))
                return
            }
            responseHeadReceived = true
            responseFraming = framing.framing
            if !connectionBound {
                connectionBound = Self.bindsConnection(request: upstreamHead.headers, response: head.headers)
            }
            var clientHead = makeClientHead(from: head, framing: framing)
            if clientHead.status.code == status.code && clientHead.status.reasonPhrase == head.status.reasonPhrase {
                clientHead.status = status  // the origin's phrase, unless a rewrite set a status
            }
            if rewriter != nil, !switchingProtocols {
                keepOriginHead(HTTPResponseHead(version: head.version, status: status, headers: head.headers))
            }
            if let rewriter, !switchingProtocols, rewriter.holdsResponseBody(clientHead, isHeadRequest: isHeadRequest) {
                heldResponse = (clientHead, HeldBody(limit: rewriter.limit))
                return
            }
            recorder.responseHead(clientHead)
            client.write(.head(clientHead))
            responseHeadWritten = true
            clientSawResponse = true
        case .body(let buffer):
            if heldResponse != nil {
                holdResponseBody(buffer)
                return
            }
            relayResponseBody(buffer)
        case .end(let trailers):
            responseComplete(trailers: trailers)
        }
    }

    func relayResponseBody(_ buffer: ByteBuffer) {
        recorder.responseBody(buffer)
        client.write(.body(.byteBuffer(buffer)))
        if !client.isWritable {
            upstream?.handler.pauseReads()
        }
    }

    func upstreamReadComplete() {
        client.flush()
    }

    func upstreamWritabilityChanged(isWritable: Bool) {
        if isWritable {
            client.setReadsPaused(false, by: .upstreamBusy)
        }
    }

    func upstreamFailed(_ error: any Error) {
        guard !finished else { return }
        upstream = nil
        // A pooled connection the origin had already closed: replay a body-less request once on
        // a new connection, as browsers do — only a safe method, and only while nothing of a
        // response reached the client (RFC 9110 §9.2.2: a POST must never run twice).
        if usingPooledConnection && !responseHeadReceived && !requestHadBody && !clientSawResponse
            && Self.isRetriable(upstreamHead.method) && !(error is UpstreamTimeoutError) {
            usingPooledConnection = false
            connectFresh()
            return
        }
        fail(Self.failure(for: error, host: key.host, port: key.port, timeout: services.configuration.upstreamTimeout))
    }

    // MARK: finishing

    private func responseComplete(trailers: HTTPHeaders?) {
        finished = true
        guard let upstream else { return }
        upstream.handler.delegate = nil
        self.upstream = nil
        if switchingProtocols {
            services.sink.record(recorder.finish(error: nil))
            client.write(.end(nil))
            client.flush()
            client.switchToRawBytes(upstream: upstream.channel)
            return
        }
        // Back to the pool only when both messages ended where both sides agree they did, and
        // once the read that ended the response is over (bytes past it close the connection).
        if requestFullyWritten && upstreamKeepAlive && !wantsUpgrade && responseFraming != .untilClose {
            let (key, channel, handler) = (key, upstream.channel, upstream.handler)
            if connectionBound {
                let privateUpstreams = client.privateUpstreams
                handler.releaseAfterRead { privateUpstreams.checkin(key, channel: channel, handler: handler) }
            } else {
                let pool = pool
                handler.releaseAfterRead { pool.checkin(key, channel: channel, handler: handler) }
            }
        } else {
            upstream.channel.close(promise: nil)
        }
        if let (head, held) = heldResponse, let rewriter {
            ExchangeRewriter.rewrite(held, headers: head.headers, replacements: rewriter.action.responseBody,
                                     side: "response", limit: rewriter.limit, cancellation: workCancellation,
                                     work: services.blockingWork,
                                     on: client.eventLoop)
                .assumeIsolated()
                .whenComplete { outcome in
                    self.sendRewrittenResponse(head: head, result: ExchangeRewriter.result(of: outcome, held: held, side: "response"),
                                               original: held)
                }
            return
        }
        services.sink.record(recorder.finish(error: nil))
        client.completeResponse(
            trailers: trailers.flatMap(TrailerFields.forwardable), close: closeClientAfterResponse || !requestEnded,
            requestEnded: requestEnded)
    }

    func fail(_ failure: ProxyFailure, closeClient: Bool = false) {
        finished = true
        workCancellation?.cancel()
        heldResponse = nil
        if let upstream {
            upstream.handler.delegate = nil
            upstream.channel.close(promise: nil)
            self.upstream = nil
        }
        if responseHeadWritten {
            // Part of the response is already with the client: closing is the only honest signal.
            // What was written goes out first, so the client sees the truncated response the flow
            // records (a head still unflushed would otherwise be discarded: a bare close).
            services.sink.record(recorder.finish(error: "\(failure.message) (response incomplete)"))
            client.flush()
            client.abortConnection()
        } else {
            services.sink.record(recorder.finish(error: failure.message))
            client.answer(failure, version: clientVersion, keepAlive: clientKeepAlive && !wantsUpgrade && !closeClient,
                          requestEnded: requestEnded)
        }
    }

    // MARK: response head

    /// The origin's head as the client gets it (`ClientResponseHead`), with a rewrite rule's
    /// status and header edits; remembers what it decided about the connection.
    private func makeClientHead(from head: HTTPResponseHead, framing: ResponseFraming.Decision) -> HTTPResponseHead {
        let decided = ClientResponseHead(
            from: head, framing: framing, clientVersion: clientVersion, clientKeepAlive: clientKeepAlive, inputClosed: client.inputClosed,
            wantsUpgrade: wantsUpgrade, isHeadRequest: isHeadRequest)
        switchingProtocols = decided.switchingProtocols
        upstreamKeepAlive = head.isKeepAlive
        closeClientAfterResponse = decided.close
        var clientHead = decided.head
        if let rewriter, !switchingProtocols {
            let before = (clientHead.status.code, ExchangeRecorder.fields(clientHead.headers))
            rewriter.editResponseHead(&clientHead)
            responseHeadEdited = clientHead.status.code != before.0 || ExchangeRecorder.fields(clientHead.headers) != before.1
        }
        return clientHead
    }
}
