import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The client side of a decrypted connection whose client chose HTTP/2 (ALPN `h2`): one
/// `NIOHTTP2Handler` for the connection, and for each stream the client opens a stream channel
/// with the HTTP/1 view of it and the same `ClientHTTPHandler` an HTTP/1 connection has. So each
/// stream is one exchange through `ExchangeDriver` and `ExchangeStateMachine`, with its own
/// back-pressure (a stream whose reader is slow stops taking the origin's bytes; the others go on).
///
/// ```
/// NIOHTTP2Handler                  frames, HPACK, flow control, the HTTP/2 attacks' limits
/// HTTP2IdleConnectionCloser        GOAWAY and close after the idle timeout with no stream open
///   per stream:
///   HeadersEndCoalescer                   a head and its end at once leave as one HEADERS frame
///                                         (gRPC's trailers-only responses)
///   HTTP2FramePayloadToHTTP1ServerCodec   HEADERS/DATA ⇄ request and response parts; drops
///                                         connection-specific fields from responses
///   ClientHTTPHandler                     as on an HTTP/1 connection (one request per stream)
/// ```
///
/// The proxy never pushes (`SETTINGS_ENABLE_PUSH` 0), takes at most 100 streams at once and
/// header lists up to the request-head limit (64 KiB, as HTTP/1's); NIOHTTP2 refuses the rest and survives rapid
/// resets, CONTINUATION floods, HPACK bombs and control-frame floods with its own limits.
enum ClientHTTP2Setup {
    static let maxConcurrentStreams = 100

    /// - Parameter tunnel: the tunnel's origin; nil for h2c sent to the proxy's own port.
    static func configure(_ channel: any Channel, services: ProxyServices,
                          tunnel: ClientHTTPHandler.TunnelDestination?) throws {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: services.configuration.maxRequestHeaderBytes),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        let pipeline = channel.pipeline.syncOperations
        // Streams run on their connection's event loop.
        let connectionTunnel = NIOLoopBound(tunnel, eventLoop: channel.eventLoop)
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connection, streamConfiguration: .init()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                // Each stream has TLS details of its own copy: a stream closing is not the
                // connection closing (`ClientTLSState.closeRequested`).
                var streamTunnel = connectionTunnel.value
                if let tls = streamTunnel?.tls { streamTunnel?.tls = ClientTLSState(copying: tls) }
                let streamPipeline = stream.pipeline.syncOperations
                try streamPipeline.addHandler(HeadersEndCoalescer())
                try streamPipeline.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                // A stream may hold an upstream connection as a whole HTTP/1 connection does:
                // it takes a slot of `--max-connections`, or the descriptors could run out.
                guard services.connectionLimit.admit(stream) else {
                    try streamPipeline.addHandler(StreamLimitRefusal(limit: services.connectionLimit.maximum))
                    return
                }
                try streamPipeline.addHandler(ClientHTTPHandler(services: services, tunnel: streamTunnel))
            }
        }
        try pipeline.addHandler(HTTP2IdleConnectionCloser(timeout: services.configuration.clientIdleTimeout,
                                                          tls: tunnel?.tls))
    }
}

/// Answers a stream opened while every `--max-connections` slot is taken: the same `503` an
/// HTTP/1 connection gets (reason in `Proxy-Status`, `Retry-After: 1`), then the stream ends.
/// The connection and its other streams go on.
final class StreamLimitRefusal: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let limit: Int
    private var answered = false

    init(limit: Int) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data), !answered else { return }
        answered = true
        let body = ConnectionLimit.refusalBody(limit: limit)
        var headers = HTTPHeaders()
        headers.add(name: "Proxy-Status", value: ConnectionLimit.refusalProxyStatus(limit: limit))
        headers.add(name: "Retry-After", value: "1")
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .serviceUnavailable,
                                                              headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// Closes an HTTP/2 client connection that has had no open stream for the client idle timeout,
/// with a GOAWAY first so the client knows no request was lost; the HTTP/1 counterpart is
/// `ClientHTTPHandler`'s idle timer. A client that ended its side of the connection (FIN) is
/// closed once its last stream is over. Counts streams from NIOHTTP2's stream events.
final class HTTP2IdleConnectionCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private let tls: ClientTLSState?
    private var openStreams = 0
    private var lastStream = HTTP2StreamID.rootStream
    /// Set from the loop's clock in `handlerAdded` (virtual time in tests).
    private var idleSince = NIODeadline.uptimeNanoseconds(0)
    private var timer = DeadlineTimer()
    /// The client ended its side of the connection: nothing more can arrive, not even a
    /// WINDOW_UPDATE, so the connection closes as soon as no stream is open.
    private var inputClosed = false

    init(timeout: TimeAmount, tls: ClientTLSState?) {
        self.timeout = timeout
        self.tls = tls
    }

    func handlerAdded(context: ChannelHandlerContext) {
        idleSince = context.eventLoop.now
        arm(context: context, at: idleSince + timeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let created = event as? NIOHTTP2StreamCreatedEvent {
            openStreams += 1
            lastStream = max(lastStream, created.streamID)
        } else if event is StreamClosedEvent {
            openStreams = max(0, openStreams - 1)
            if openStreams == 0 { idleSince = context.eventLoop.now }
        } else if case ChannelEvent.inputClosed = event {
            inputClosed = true
        }
        context.fireUserInboundEventTriggered(event)
        if inputClosed && openStreams == 0 && context.channel.isActive {
            tls?.closeRequested = true
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        context.fireChannelInactive()
    }

    private func arm(context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer.schedule(at: deadline, on: context.eventLoop) { [weak self] in
            self?.fired(context: context)
        }
    }

    private func fired(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = context.eventLoop.now
        guard openStreams == 0, now - idleSince >= timeout else {
            arm(context: context, at: (openStreams == 0 ? idleSince : now) + timeout)
            return
        }
        tls?.closeRequested = true
        let goAway = HTTP2Frame(streamID: .rootStream,
                                payload: .goAway(lastStreamID: lastStream, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(NIOAny(goAway)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// The names RFC 9113 §7 gives HTTP/2 error codes, for flow errors a person reads.
enum HTTP2ErrorText {
    static func name(of code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: return "NO_ERROR"
        case .protocolError: return "PROTOCOL_ERROR"
        case .internalError: return "INTERNAL_ERROR"
        case .flowControlError: return "FLOW_CONTROL_ERROR"
        case .settingsTimeout: return "SETTINGS_TIMEOUT"
        case .streamClosed: return "STREAM_CLOSED"
        case .frameSizeError: return "FRAME_SIZE_ERROR"
        case .refusedStream: return "REFUSED_STREAM"
        case .cancel: return "CANCEL"
        case .compressionError: return "COMPRESSION_ERROR"
        case .connectError: return "CONNECT_ERROR"
        case .enhanceYourCalm: return "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: return "INADEQUATE_SECURITY"
        case .http11Required: return "HTTP_1_1_REQUIRED"
        default: return "error code \(code.networkCode)"
        }
    }
}
