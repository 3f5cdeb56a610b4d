import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 connection to an origin that chose `h2` in ALPN, shared by many exchanges at once:
/// each exchange gets a stream of its own (`openStream`), and that stream looks to the exchange
/// exactly like an HTTP/1.1 connection (its pipeline ends in an `UpstreamHTTPHandler`), so
/// `ExchangeDriver` and the state machine do not know which protocol the origin speaks.
///
/// ```
/// NIOSSLClientHandler … (TLS, as for HTTP/1)
/// NIOHTTP2Handler                 frames, HPACK, flow control; push refused
/// UpstreamHTTP2Connection         this: SETTINGS and GOAWAY from the origin, stream count,
///                                 idle close
///   per stream:
///   HTTP2FramePayloadToHTTP1ClientCodec   request parts → HEADERS/DATA (`Host` → `:authority`,
///                                         connection-specific fields dropped), and back
///   UpstreamHTTPHandler                   as on an HTTP/1.1 connection, one exchange
/// ```
///
/// It lives in its event loop's `UpstreamConnectionPool` while it can take streams: at most the
/// origin's `SETTINGS_MAX_CONCURRENT_STREAMS` at once (past it, the pool dials another
/// connection), none after the origin's GOAWAY (streams already open finish; the next request
/// dials a new connection). With no stream open for the upstream timeout it closes, as an idle
/// HTTP/1 connection does.
final class UpstreamHTTP2Connection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    /// Streams assumed allowed until the origin's SETTINGS say otherwise (RFC 9113 §6.5.2
    /// leaves it unlimited; 100 is what most servers announce).
    static let assumedMaxConcurrentStreams = 100
    /// The largest response header list taken from an origin (decoded size; HPACK bombs stop
    /// here).
    static let maxHeaderListSize = 256 << 10

    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let streamTimeout: TimeAmount
    let tlsSession: UpstreamTLSSession?
    let serverAddress: String?

    private(set) var openStreams = 0
    private(set) var maxConcurrentStreams = UpstreamHTTP2Connection.assumedMaxConcurrentStreams
    /// The origin sent GOAWAY (or the connection is closing): no new stream.
    private(set) var goingAway = false
    /// Called once when the connection closes or goes away, so the pool forgets it.
    var onRetire: (() -> Void)?
    /// The pool shares it; one it did not take (over its bounds) closes once its streams end.
    var isShared = false
    private var idleTimer = DeadlineTimer()
    private var context: ChannelHandlerContext?
    private let settingsPromise: EventLoopPromise<Void>
    private var settingsKnown = false

    private init(channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, streamTimeout: TimeAmount,
                 tlsSession: UpstreamTLSSession?) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.streamTimeout = streamTimeout
        self.tlsSession = tlsSession
        self.serverAddress = channel.remoteAddress?.ipAddress
        self.settingsPromise = channel.eventLoop.makePromise()
    }

    /// Succeeds once the origin's first SETTINGS arrived (its stream limit is known; streams
    /// opened before it could pass that limit), fails if the connection closes first.
    var ready: EventLoopFuture<Void> { settingsPromise.futureResult }

    /// Puts HTTP/2 on a connection whose TLS handshake just chose `h2`, before any byte of the
    /// origin's is read.
    static func install(on channel: any Channel, streamTimeout: TimeAmount, tlsSession: UpstreamTLSSession?) throws {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
        ]
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: configuration, streamConfiguration: .init()
        ) { pushed in
            // Push is disabled; a stream the origin opens anyway is refused.
            pushed.close(promise: nil)
            return pushed.eventLoop.makeSucceededVoidFuture()
        }
        try pipeline.addHandler(UpstreamHTTP2Connection(
            channel: channel, multiplexer: multiplexer, streamTimeout: streamTimeout, tlsSession: tlsSession))
    }

    /// The connection's own handler, when `channel` speaks HTTP/2.
    static func on(_ channel: any Channel) -> UpstreamHTTP2Connection? {
        try? channel.pipeline.syncOperations.handler(type: UpstreamHTTP2Connection.self)
    }

    /// No stream is open: closing it loses nothing.
    var isIdle: Bool { openStreams == 0 }

    /// Closes it (an idle connection the pool evicts).
    func close() {
        retire()
        channel.close(promise: nil)
    }

    /// A new stream may be opened now.
    var hasCapacity: Bool {
        !goingAway && channel.isActive && openStreams < maxConcurrentStreams
    }

    /// Opens a stream for one exchange; it ends (and frees its slot) when the exchange closes it
    /// or both sides ended it.
    func openStream() -> EventLoopFuture<(any Channel, UpstreamHTTPHandler)> {
        let loop = channel.eventLoop
        openStreams += 1
        idleTimer.cancel()
        let promise = loop.makePromise(of: (any Channel).self)
        let timeout = streamTimeout
        let session = tlsSession
        let address = serverAddress
        multiplexer.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                let pipeline = stream.pipeline.syncOperations
                try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                let handler = UpstreamHTTPHandler(timeout: timeout, isStream: true)
                handler.tlsSession = session
                handler.knownServerAddress = address
                try pipeline.addHandler(handler)
            }
        }
        return promise.futureResult.assumeIsolated().flatMapThrowing { stream in
            stream.closeFuture.assumeIsolated().whenComplete { _ in self.streamClosed() }
            let handler = try stream.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self)
            return (stream, handler)
        }.flatMapErrorThrowing { error in
            self.streamClosed()
            throw error
        }.nonisolated()
    }

    private func streamClosed() {
        openStreams -= 1
        guard openStreams == 0, let context else { return }
        if goingAway || !isShared {
            context.close(promise: nil)
            return
        }
        let deadline = context.eventLoop.now + streamTimeout
        idleTimer.schedule(at: deadline, on: context.eventLoop) { [self] in
            if openStreams == 0 { self.context?.close(promise: nil) }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // An origin that never sends its SETTINGS (nor a stream ever opens) is let go like an
        // idle connection.
        let deadline = context.eventLoop.now + streamTimeout
        idleTimer.schedule(at: deadline, on: context.eventLoop) { [self] in
            if openStreams == 0 { self.context?.close(promise: nil) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer.cancel()
        self.context = nil
        settingsPromise.fail(ChannelError.ioOnClosedChannel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                maxConcurrentStreams = setting.value
            }
            if !settingsKnown {
                settingsKnown = true
                settingsPromise.succeed()
            }
        case .goAway:
            // Streams the origin already took run to their end; NIOHTTP2 fails the others.
            retire()
            if openStreams == 0 { context.close(promise: nil) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A connection error: NIOHTTP2 already told the origin (GOAWAY) and fails each stream.
        retire()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settingsPromise.fail(ChannelError.eof)
        retire()
        idleTimer.cancel()
        context.fireChannelInactive()
    }

    private func retire() {
        goingAway = true
        let onRetire = self.onRetire
        self.onRetire = nil
        onRetire?()
    }
}
