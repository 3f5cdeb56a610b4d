import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel

/// One request forwarded to an origin and its response relayed back, streamed both ways with
/// back-pressure, and recorded as a flow.
///
/// Created by `HTTPProxyHandler` for each absolute-form request; it owns the upstream connection
/// for the exchange's lifetime and gives it back to the pool only after a clean, complete
/// exchange. Everything runs on the client channel's event loop.
final class ForwardExchange: UpstreamHTTPHandlerDelegate {
    private unowned let client: HTTPProxyHandler
    private let services: ProxyServices
    private let pool: UpstreamConnectionPool
    private let key: UpstreamConnectionPool.Key
    private var recorder: ExchangeRecorder
    private let upstreamHead: HTTPRequestHead
    private let clientVersion: HTTPVersion
    private let clientKeepAlive: Bool
    private let isHeadRequest: Bool
    /// The request asks for a protocol upgrade (WebSocket) and the upgrade headers are forwarded.
    private let wantsUpgrade: Bool
    /// How to reach the origin over TLS (nil: plain HTTP).
    private let upstreamTLS: UpstreamTLSTarget?

    private var upstream: (channel: any Channel, handler: UpstreamHTTPHandler)?
    private var usingPooledConnection = false
    /// Request parts that arrived while the upstream connection was being opened.
    private var pendingParts: [HTTPClientRequestPart] = []
    private var requestHadBody = false
    private var requestEnded = false
    /// The request's trailers, kept so a retried request can be ended again.
    private var requestTrailers: HTTPHeaders?
    private var requestFullyWritten = false
    private var responseHeadReceived = false
    private var responseHeadWritten = false
    private var upstreamKeepAlive = false
    private var closeClientAfterResponse = false
    private var switchingProtocols = false
    private var finished = false

    init(client: HTTPProxyHandler, services: ProxyServices, pool: UpstreamConnectionPool, head: HTTPRequestHead,
         scheme: String, host: String, port: Int, pathAndQuery: String, clientAddress: String,
         upstreamTLS: UpstreamTLSTarget? = nil, clientTLS: TLSDetails? = nil, clientAuthority: String? = nil) {
        self.client = client
        self.services = services
        self.pool = pool
        self.upstreamTLS = upstreamTLS
        self.key = .init(host: host, port: port, tls: upstreamTLS != nil, serverName: upstreamTLS?.serverName)
        self.clientVersion = head.version
        self.clientKeepAlive = head.isKeepAlive
        self.isHeadRequest = head.method == .HEAD
        self.recorder = ExchangeRecorder(
            clientAddress: clientAddress, method: head.method.rawValue, scheme: scheme, host: host, port: port,
            path: pathAndQuery, version: head.version, headers: head.headers,
            cap: services.configuration.maxCapturedBodyBytes)
        if upstreamTLS != nil {
            recorder.clientTLS(clientTLS ?? TLSDetails())
        }
        let (headers, upgrade) = Self.upstreamHeaders(
            from: head.headers, authority: clientAuthority ?? Self.authority(host: host, port: port, scheme: scheme))
        self.wantsUpgrade = upgrade
        self.upstreamHead = HTTPRequestHead(version: .http1_1, method: head.method, uri: pathAndQuery, headers: headers)
    }

    // MARK: starting

    func start() {
        if let (channel, handler) = pool.checkout(key) {
            usingPooledConnection = true
            attach(channel: channel, handler: handler, timings: .reused)
        } else {
            connectFresh()
        }
    }

    private func connectFresh() {
        client.setReadsPaused(true, by: .connecting)
        let eventLoop = client.eventLoop
        services.connector.connect(host: key.host, port: key.port, kind: .http, tls: upstreamTLS, on: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                // The client may have left while connecting (`clientClosed` finished us); its
                // handler can be gone by now, so nothing may touch `client` then.
                guard !self.finished else {
                    if case .success(let (channel, _)) = result { channel.close(promise: nil) }
                    return
                }
                self.client.setReadsPaused(false, by: .connecting)
                switch result {
                case .success(let (channel, timings)):
                    guard let handler = try? channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self)
                    else {
                        channel.close(promise: nil)
                        self.fail(.connectFailed(host: self.key.host, port: self.key.port, reason: "no HTTP pipeline"))
                        return
                    }
                    self.attach(channel: channel, handler: handler, timings: timings)
                case .failure(let error):
                    self.fail(error as? ProxyFailure ?? .connectFailed(host: self.key.host, port: self.key.port, reason: "\(error)"))
                }
            }
    }

    private func attach(channel: any Channel, handler: UpstreamHTTPHandler, timings: UpstreamConnectTimings) {
        upstream = (channel, handler)
        handler.delegate = self
        recorder.upstreamConnected(timings, tls: handler.tlsSession, serverAddress: handler.serverAddress)
        handler.send(.head(upstreamHead))
        for part in pendingParts {
            handler.send(part)
        }
        pendingParts.removeAll()
        if requestEnded {
            handler.send(.end(requestTrailers))
            markRequestWritten()
        }
        handler.flush()
    }

    private func markRequestWritten() {
        requestFullyWritten = true
        recorder.requestFullySent()
    }

    // MARK: from the client

    func clientBody(_ buffer: ByteBuffer) {
        guard !finished else { return }
        requestHadBody = true
        recorder.requestBody(buffer)
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
        requestTrailers = trailers
        if let upstream {
            upstream.handler.send(.end(trailers))
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

    /// The client went away before the exchange completed.
    func clientClosed(reason: String = "client closed the connection before the exchange completed") {
        guard !finished else { return }
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
            if head.status.code < 200 && head.status != .switchingProtocols {
                // 100 Continue and friends: relay to clients that understand them.
                if clientVersion.major == 1 && clientVersion.minor >= 1 {
                    client.write(.head(HTTPResponseHead(version: clientVersion, status: head.status, headers: head.headers)))
                    client.flush()
                }
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
            responseHeadReceived = true
            recorder.responseHead(head)
            let clientHead = makeClientHead(from: head)
            client.write(.head(clientHead))
            responseHeadWritten = true
        case .body(let buffer):
            recorder.responseBody(buffer)
            client.write(.body(.byteBuffer(buffer)))
            if !client.isWritable {
                upstream?.handler.pauseReads()
            }
        case .end(let trailers):
            responseComplete(trailers: trailers)
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
        // a new connection, as browsers do.
        if usingPooledConnection && !responseHeadReceived && !requestHadBody && !(error is UpstreamTimeoutError) {
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
        services.sink.record(recorder.finish(error: nil))
        if switchingProtocols {
            client.write(.end(nil))
            client.flush()
            client.switchToRawBytes(upstream: upstream.channel)
            return
        }
        if requestFullyWritten && upstreamKeepAlive && !wantsUpgrade {
            pool.checkin(key, channel: upstream.channel, handler: upstream.handler)
        } else {
            upstream.channel.close(promise: nil)
        }
        client.completeResponse(
            trailers: trailers, close: closeClientAfterResponse || !requestEnded, requestEnded: requestEnded)
    }

    private func fail(_ failure: ProxyFailure, closeClient: Bool = false) {
        finished = true
        if let upstream {
            upstream.handler.delegate = nil
            upstream.channel.close(promise: nil)
            self.upstream = nil
        }
        if responseHeadWritten {
            // Part of the response is already with the client: closing is the only honest signal.
            services.sink.record(recorder.finish(error: "\(failure.message) (response incomplete)"))
            client.abortConnection()
        } else {
            services.sink.record(recorder.finish(error: failure.message))
            client.answer(failure, version: clientVersion, keepAlive: clientKeepAlive && !wantsUpgrade && !closeClient,
                          requestEnded: requestEnded)
        }
    }

    // MARK: header rewriting

    private func makeClientHead(from head: HTTPResponseHead) -> HTTPResponseHead {
        switchingProtocols = head.status == .switchingProtocols && wantsUpgrade
        upstreamKeepAlive = head.isKeepAlive
        var headers = head.headers
        if Self.hasHopByHopHeader(headers) {
            let hop = HopByHopHeaders(connectionValues: headers[canonicalForm: "connection"].map(String.init),
                                      forwardUpgrade: switchingProtocols)
            headers = Self.filtered(headers, keeping: hop)
        }
        // A failed upgrade leaves the client's request parser stopped: this connection is done.
        var close = !clientKeepAlive || client.inputClosed || (wantsUpgrade && !switchingProtocols)
        let http10 = clientVersion.major == 1 && clientVersion.minor == 0
        if http10 {
            let hasLength = headers.contains(name: "content-length")
            headers.remove(name: "transfer-encoding")
            let bodyless = isHeadRequest || head.status == .noContent || head.status == .notModified
            if !hasLength && !bodyless {
                close = true  // an HTTP/1.0 client reads such a body until the connection closes
            }
        }
        if switchingProtocols {
            headers.add(name: "Connection", value: "upgrade")
        } else if close {
            headers.add(name: "Connection", value: "close")
        } else if http10 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        closeClientAfterResponse = close
        return HTTPResponseHead(version: clientVersion, status: head.status, headers: headers)
    }

    /// Whether any header could be hop-by-hop; most messages have none, and then the headers
    /// are forwarded as they are, without a copy.
    static func hasHopByHopHeader(_ headers: HTTPHeaders) -> Bool {
        for (name, _) in headers where HopByHopHeaders.mayBeHopByHop(name) && !HopByHopHeaders.standard.forwards(name) {
            return true
        }
        return false
    }

    private static func filtered(_ headers: HTTPHeaders, keeping hop: HopByHopHeaders) -> HTTPHeaders {
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count + 1)
        for (name, value) in headers where hop.forwards(name) {
            kept.add(name: name, value: value)
        }
        return kept
    }

    /// The client's headers minus hop-by-hop ones, with `Host` set to the target's authority
    /// (RFC 9112 §3.2.2); the second value tells whether an upgrade is forwarded.
    static func upstreamHeaders(from original: HTTPHeaders, authority: String) -> (HTTPHeaders, Bool) {
        // The common case: one Host header that already names the target and nothing
        // hop-by-hop. Forward the headers as they are.
        if !hasHopByHopHeader(original), original.first(name: "host") == authority,
           original[canonicalForm: "host"].count == 1 {
            return (original, false)
        }
        var connectionValues = original[canonicalForm: "connection"].map(String.init)
        connectionValues += original[canonicalForm: "proxy-connection"].map(String.init)
        let hop = HopByHopHeaders(connectionValues: connectionValues, forwardUpgrade: original.contains(name: "upgrade"))
        var headers = HTTPHeaders()
        headers.reserveCapacity(original.count + 1)
        var hostWritten = false
        if !original.contains(name: "host") {
            headers.add(name: "Host", value: authority)
            hostWritten = true
        }
        for (name, value) in original where hop.forwards(name) {
            if name.equalsIgnoringASCIICase("host") {
                if !hostWritten {
                    headers.add(name: name, value: authority)
                    hostWritten = true
                }
                continue
            }
            headers.add(name: name, value: value)
        }
        if hop.keepsUpgrade {
            headers.add(name: "Connection", value: "upgrade")
        }
        return (headers, hop.keepsUpgrade)
    }

    static func authority(host: String, port: Int, scheme: String) -> String {
        let hostPart = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let defaultPort = (scheme == "https" || scheme == "wss") ? 443 : 80
        return port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    static func failure(for error: any Error, host: String, port: Int, timeout: TimeAmount) -> ProxyFailure {
        switch error {
        case let failure as ProxyFailure:
            return failure
        case is UpstreamTimeoutError:
            return .upstreamTimeout(host: host, port: port, seconds: timeout.nanoseconds / 1_000_000_000)
        case let parserError as HTTPParserError:
            if case .invalidEOFState = parserError {
                return .upstreamClosed(host: host, port: port)
            }
            return .upstreamProtocolError(host: host, reason: "\(parserError)")
        default:
            return .upstreamClosed(host: host, port: port)
        }
    }
}
