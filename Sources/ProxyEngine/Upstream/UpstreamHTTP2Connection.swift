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
///                                 idle close, the origin's protocol errors in words
///                                 (a stream error ends only its stream)
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
    /// How many response body bytes one stream may have in flight from the origin, and all
    /// streams of the connection together (flow control, RFC 9113 §5.2). HTTP/2's 64 KiB
    /// default made a download wait for a WINDOW_UPDATE every 32 KiB: a 10 MiB body through an
    /// h2 origin took 1.7× the CPU of the same over HTTP/1.1. Bytes are only taken (and the
    /// window opened again) as the exchange reads them, so a slow client still holds the
    /// origin back, and a connection buffers at most `connectionWindow` (browsers open 6 MiB and
    /// 15 MiB). Windows of 256 KiB and 1 MiB relayed a download about 15 % slower.
    static let streamWindow = 1 << 20
    static let connectionWindow = 4 << 20

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
    /// Why NIOHTTP2 gave up on the connection (the origin broke the protocol), in words.
    private var connectionViolation: String?
    /// Why NIOHTTP2 just reset a stream itself, for that stream's failure (`explain`).
    private var streamViolation: String?

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
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
        ]
        configuration.targetWindowSize = connectionWindow
        var streams = NIOHTTP2Handler.StreamConfiguration()
        streams.targetWindowSize = streamWindow
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: configuration, streamConfiguration: streams
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
            handler.explainFailure = { error in self.explain(error) }
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
            // Before its SETTINGS the origin was silent, not closing: the exchange waiting for
            // them is answered with a timeout (504), not "closed" (hostile-origin tests).
            if !settingsKnown { settingsPromise.fail(UpstreamTimeoutError()) }
            if openStreams == 0 { self.context?.close(promise: nil) }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // An origin that never sends its SETTINGS (nor a stream ever opens) is let go like an
        // idle connection.
        let deadline = context.eventLoop.now + streamTimeout
        idleTimer.schedule(at: deadline, on: context.eventLoop) { [self] in
            // Before its SETTINGS the origin was silent, not closing: the exchange waiting for
            // them is answered with a timeout (504), not "closed" (hostile-origin tests).
            if !settingsKnown { settingsPromise.fail(UpstreamTimeoutError()) }
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
        if let reason = HTTP2ViolationText.streamReason(error) {
            // A stream error (a body not matching its content-length, a forbidden field): NIOHTTP2
            // reset that one stream and fails it next, within this read. Closing here would fail
            // every other exchange on the connection (hostile-origin tests).
            // NIOHTTP2 failed that stream before saying why; its handler asks `explain` on the
            // next loop task, queued before this one.
            streamViolation = reason
            context.eventLoop.assumeIsolated().execute { self.streamViolation = nil }
            return
        }
        // A connection error: NIOHTTP2 already told the origin (GOAWAY) and fails each stream.
        connectionViolation = connectionViolation ?? HTTP2ViolationText.connectionReason(error)
        retire()
        context.close(promise: nil)
    }

    /// What a stream of this connection reports as its failure: NIOHTTP2 fails a stream it reset
    /// itself with the same `StreamClosed` as a reset from the origin, and the streams of a
    /// connection it gave up on with a bare close; either would read as the origin's doing.
    func explain(_ error: any Error) -> any Error {
        if let connectionViolation {
            return UpstreamHTTP2Violation(reason: connectionViolation)
        }
        if error is NIOHTTP2Errors.StreamClosed, let reason = streamViolation {
            streamViolation = nil
            return UpstreamHTTP2Violation(reason: reason)
        }
        return error
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

/// The origin broke HTTP/2 (NIOHTTP2 refused its frames): `reason` in words, for the flow.
struct UpstreamHTTP2Violation: Error {
    let reason: String
}

/// NIOHTTP2's errors about what an origin sent, in words (its own descriptions name types and
/// source lines).
enum HTTP2ViolationText {
    /// The reason for an error NIOHTTP2 raises only for one stream (it resets that stream and the
    /// connection goes on); nil for any other error.
    static func streamReason(_ error: any Error) -> String? {
        switch error {
        case is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch:
            return "the response body did not match its content-length"
        case is NIOHTTP2Errors.ForbiddenHeaderField:
            return "the response carried a connection-specific field, which HTTP/2 forbids"
        case is NIOHTTP2Errors.MissingPseudoHeader, is NIOHTTP2Errors.DuplicatePseudoHeader,
             is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader, is NIOHTTP2Errors.UnsupportedPseudoHeader,
             is NIOHTTP2Errors.InvalidPseudoHeaders, is NIOHTTP2Errors.InvalidStatusValue,
             is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName, is NIOHTTP2Errors.InvalidPseudoHeaderValue:
            return "the response head is not valid HTTP/2 (its pseudo-fields, status or field names)"
        default:
            return nil
        }
    }

    /// The reason for an error that ended the whole connection.
    static func connectionReason(_ error: any Error) -> String {
        switch error {
        case is NIOHTTP2Errors.PushInViolationOfSetting:
            return "the origin pushed a response although the proxy disabled server push"
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock, is NIOHTTP2Errors.ExcessiveContinuationFrames:
            return "the response header section is larger than \(UpstreamHTTP2Connection.maxHeaderListSize >> 10) KiB"
        case is NIOHTTP2Errors.UnableToParseFrame:
            // Bad lengths and padding, and header blocks HPACK refuses (a bomb past the limit).
            return "the origin sent an HTTP/2 frame that could not be decoded (malformed, or a header "
                + "section over \(UpstreamHTTP2Connection.maxHeaderListSize >> 10) KiB)"
        default:
            return "the origin broke the HTTP/2 protocol"
        }
    }
}
