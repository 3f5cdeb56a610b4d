import NIOCore
import NIOHTTP1
import NIOHTTP2

/// What an upstream HTTP connection reports to the exchange currently using it.
///
/// All calls happen on the channel's event loop, which is also the client's.
protocol UpstreamHTTPHandlerDelegate: AnyObject {
    func upstreamReceived(_ part: HTTPClientResponsePart)
    func upstreamReadComplete()
    func upstreamWritabilityChanged(isWritable: Bool)
    /// The connection failed or closed before the exchange released it.
    func upstreamFailed(_ error: any Error)
}

/// The last handler of an upstream HTTP/1.1 connection (or of one stream of an
/// `UpstreamHTTP2Connection`, which looks the same to the exchange): hands response parts to the exchange
/// that owns the connection and lets that exchange hold reads when the client is slow
/// (back-pressure).
///
/// While the connection sits idle in the pool it has no delegate; anything that happens then
/// (the origin closes it, it times out) just closes it and tells the pool.
///
/// The upstream timeout only runs while a response is awaited and reading is not paused: a
/// client that reads slowly (back-pressure) or is still uploading is never blamed on the origin.
final class UpstreamHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The exchange using this connection. A strong reference on purpose (a weak one puts both
    /// objects on the slow reference-counting path). Set by `attach`; let go only here, when the
    /// connection is checked in, detached or fails.
    private(set) var delegate: (any UpstreamHTTPHandlerDelegate)? {
        didSet {
            if delegate == nil, let context {
                lastActivity = context.eventLoop.now  // idle in the pool from now on
            }
        }
    }
    /// Called once when the connection closes while idle in the pool.
    var onIdleClose: (() -> Void)?
    /// The shared pool's list this connection idled in last, and the closure that takes it out
    /// of that list (its `onIdleClose` there): kept for the connection's next check-ins
    /// (`UpstreamConnectionPool.IdleList`).
    var poolSlot: UpstreamConnectionPool.IdleList?
    var poolSlotClose: (() -> Void)?
    /// What the TLS handshake established (nil for plain HTTP); set once when connected.
    var tlsSession: UpstreamTLSSession?
    /// The origin's IP address (no port), read from the socket on first use and kept for every
    /// exchange on this connection; nil before the connection is up or without a socket.
    var serverAddress: String? {
        if let knownServerAddress { return knownServerAddress }
        knownServerAddress = context?.channel.remoteAddress?.ipAddress
        return knownServerAddress
    }
    var knownServerAddress: String?
    /// A stream of an `UpstreamHTTP2Connection`: one exchange, never pooled by itself.
    let isStream: Bool
    /// A stream's failure as its connection explains it (`UpstreamHTTP2Connection.explain`): a
    /// reset or close the proxy's own HTTP/2 codec caused is not the origin's reset or close.
    var explainFailure: ((any Error) -> any Error)?

    private var readsPaused = false
    private var readPending = false
    private var context: ChannelHandlerContext?
    private let timeout: TimeAmount
    private var timer = DeadlineTimer()
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// The request is fully written and its response has not ended.
    private var awaitingResponse = false

    /// Where the connection goes when the read that ended its response is over (`checkIn`);
    /// nil otherwise.
    private var release: Return?

    /// Where a connection goes back to: the shared pool (named, so that giving it back makes
    /// no closure), or anywhere a closure says (a client's own connections).
    private enum Return {
        case pool(UpstreamConnectionPool, UpstreamConnectionPool.Key)
        case call(() -> Void)
    }
    /// Response body bytes read since the connection was last given back.
    private var bodyBytesRead = 0

    /// The origin's reason phrases (NIO's decoder drops them); nil in pipelines without one.
    private let statusLines: StatusLineTap?

    init(timeout: TimeAmount, statusLines: StatusLineTap? = nil, isStream: Bool = false) {
        self.timeout = timeout
        self.statusLines = statusLines
        self.isStream = isStream
    }

    /// The status of a head the origin sent, with the origin's own reason phrase when it had one
    /// other than the standard phrase. Called once per head received, in order.
    func statusWithOriginPhrase(_ status: HTTPResponseStatus) -> HTTPResponseStatus {
        guard let phrase = statusLines?.takePhrase(for: status.code) else { return status }
        return .custom(code: status.code, reasonPhrase: phrase)
    }

    /// Adds the HTTP client codec (informational responses forwarded, leftover bytes after an
    /// upgrade forwarded to whatever replaces the decoder) and this handler.
    ///
    /// The encoder never adds or removes framing headers: every request head the engine sends
    /// carries exactly the framing it decided (`RequestFraming`), and NIO's own guess (it drops
    /// `Content-Length` for TRACE, ignores `Transfer-Encoding: Chunked`) would unframe a body.
    static func installPipeline(on pipeline: ChannelPipeline.SynchronousOperations, timeout: TimeAmount) throws {
        var encoding = HTTPRequestEncoder.Configuration()
        encoding.automaticallySetFramingHeaders = false
        try TLSWriteCoalescer.install(on: pipeline)
        try pipeline.addHandler(HTTPRequestEncoder(configuration: encoding))
        let statusLines = StatusLineTap()
        try pipeline.addHandler(statusLines)
        try pipeline.addHandler(
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
        try pipeline.addHandler(UpstreamHTTPHandler(timeout: timeout, statusLines: statusLines))
    }

    /// Takes the HTTP handlers off an upgraded connection and puts `replacement` in their place;
    /// bytes the decoder read past the `101` response go to `replacement`.
    static func removePipeline(from channel: any Channel, replacingWith replacement: GlueHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(replacement)
        pipeline.removeHandler(try pipeline.handler(type: UpstreamHTTPHandler.self), promise: nil)
        pipeline.removeHandler(try pipeline.handler(type: HTTPRequestEncoder.self), promise: nil)
        if let coalescer = try? pipeline.handler(type: TLSWriteCoalescer.self) {
            pipeline.removeHandler(coalescer, promise: nil)
        }
        pipeline.removeHandler(try pipeline.handler(type: StatusLineTap.self), promise: nil)
        // The decoder leaves on the next loop tick, handing over the bytes it read past the 101.
        let decoderRemoved = channel.eventLoop.makePromise(of: Void.self)
        pipeline.removeHandler(try pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self),
                               promise: decoderRemoved)
        decoderRemoved.futureResult.assumeIsolated().whenComplete { _ in
            replacement.flushPartner()
            channel.read()
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive {
            startTimer(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
        release = nil
        explainFailure = nil  // it holds the connection
        poolSlot = nil
        poolSlotClose = nil  // it holds the pool
        self.context = nil
    }

    /// The exchange `delegate` uses this connection from now on.
    func attach(_ delegate: any UpstreamHTTPHandlerDelegate) {
        self.delegate = delegate
    }

    /// No exchange uses this connection any more (it idles in a pool, or leaves HTTP).
    func detach() {
        delegate = nil
    }

    /// The exchange is done with the connection and it cannot be reused: closed.
    func detachAndClose() {
        delegate = nil
        release = nil
        context?.close(promise: nil)
    }

    /// The exchange is done with the connection: it goes back through `giveBack` after the read.
    func checkIn(_ giveBack: @escaping () -> Void) {
        checkIn(.call(giveBack))
    }

    /// The exchange is done with the connection: it goes back to `pool` under `key` after the read.
    func checkIn(to pool: UpstreamConnectionPool, key: UpstreamConnectionPool.Key) {
        checkIn(.pool(pool, key))
    }

    /// Gives the connection back (to the shared pool, or to the client's own connections) once
    /// the read that carried the end of the response is over. The decoder is still working
    /// through that read: bytes the origin sent past its response would be the answer of a
    /// request sent on the connection meanwhile (a pipelined one takes it at once). Any such
    /// bytes put the framing in doubt, and the connection closes instead.
    private func checkIn(_ destination: Return) {
        delegate = nil
        guard !isStream else {
            // Both sides ended the stream: closing it frees its slot on the connection, which
            // stays in the pool by itself.
            release = nil
            context?.close(promise: nil)
            return
        }
        release = destination
    }

    func channelActive(context: ChannelHandlerContext) {
        startTimer(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        lastActivity = context.eventLoop.now
        switch part {
        case .body(let buffer): bodyBytesRead &+= buffer.readableBytes
        case .end: awaitingResponse = false
        case .head: break
        }
        if let delegate {
            delegate.upstreamReceived(part)
        } else {
            // Nobody asked: an idle connection must not talk (nor one whose response just ended,
            // in the same read). Drop it.
            release = nil
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let release {
            self.release = nil
            if bodyBytesRead >= ChannelTuning.largeTransfer {  // before it idles in the pool
                ChannelTuning.releaseReadBuffers(on: context.channel)
            }
            bodyBytesRead = 0
            switch release {
            case .pool(let pool, let key): pool.checkin(key, channel: context.channel, handler: self)
            case .call(let giveBack): giveBack()
            }
        }
        delegate?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        delegate?.upstreamWritabilityChanged(isWritable: context.channel.isWritable)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        release = nil
        let delegate = self.delegate
        self.delegate = nil
        if let explainFailure, error is NIOHTTP2Errors.StreamClosed {
            // A stream NIOHTTP2 reset itself (a body longer than its content-length, a forbidden
            // field) fails before the connection hears why: report it a loop task later, when
            // the connection can tell that reset from one the origin sent.
            context.eventLoop.assumeIsolated().execute { delegate?.upstreamFailed(explainFailure(error)) }
            context.close(promise: nil)
            return
        }
        delegate?.upstreamFailed(explainFailure?(error) ?? error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        release = nil
        if let delegate {
            self.delegate = nil
            delegate.upstreamFailed(explainFailure?(ChannelError.eof) ?? ChannelError.eof)
        } else {
            let onIdleClose = self.onIdleClose
            self.onIdleClose = nil
            onIdleClose?()
        }
        context.fireChannelInactive()
    }

    // MARK: timeout

    private func startTimer(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        armTimer(at: lastActivity + timeout)
    }

    private func armTimer(at deadline: NIODeadline) {
        guard let context else { return }
        timer.schedule(at: deadline, on: context.eventLoop) { self.timerFired() }
    }

    /// Idle in the pool for the timeout: close. Awaiting a response that does not come: fail
    /// the exchange with a timeout. Otherwise look again later.
    private func timerFired() {
        guard let context else { return }
        let now = context.eventLoop.now
        let watched = delegate == nil || (awaitingResponse && !readsPaused)
        guard watched else {
            armTimer(at: now + timeout)
            return
        }
        guard now - lastActivity >= timeout else {
            armTimer(at: lastActivity + timeout)
            return
        }
        if let delegate {
            self.delegate = nil
            delegate.upstreamFailed(UpstreamTimeoutError())
        }
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if readsPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    /// Writes a request part towards the origin (not flushed).
    func send(_ part: HTTPClientRequestPart) {
        guard let context else { return }
        if case .head = part {
            statusLines?.arm()
        }
        if case .end = part {
            awaitingResponse = true
            lastActivity = context.eventLoop.now
        }
        context.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() {
        context?.flush()
    }

    /// Stops reading from the origin until `resumeReads()`: the client is not keeping up.
    func pauseReads() {
        readsPaused = true
    }

    func resumeReads() {
        guard readsPaused else { return }
        readsPaused = false
        if let context { lastActivity = context.eventLoop.now }
        if readPending, let context {
            readPending = false
            context.read()
        }
    }
}

/// The origin sent nothing for the upstream timeout.
struct UpstreamTimeoutError: Error {}
