import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// Whom a `LoadConnectionHandler` reports to: the HTTP/1 `LoadWorker`, or the `LoadHTTP2Worker`
/// (which never sends an HTTP/1 request, so it never hears `responseEnded`).
protocol LoadConnectionOwner: AnyObject {
    func connectionReady(_ handler: LoadConnectionHandler)
    func responseEnded(_ handler: LoadConnectionHandler, status: Int, connectionClose: Bool)
    func connectionFailed(_ handler: LoadConnectionHandler, error: LoadError)
}

/// One connection of a worker: says CONNECT (or the SOCKS5 handshake) when the plan tunnels, adds TLS inside the tunnel,
/// tells its worker when a request can be sent, and finds where each response ends. For
/// `--h2` it stops at `ready`: `startHTTP2` puts NIOHTTP2 after this handler, which from then
/// on passes the bytes through and watches the connection (close, errors, timeouts) for its
/// worker. (NIOHTTP2's helper cannot go right after TLS: NIOSSL's handler is not `Sendable`.)
///
/// It reports exactly one outcome per connection to its worker: after `ready` any number of
/// `responseEnded`, then either nothing (the worker closed it) or one `connectionFailed`.
/// Whatever happens after that (the peer's unclean TLS shutdown after `Connection: close`, a
/// late error) is ignored.
final class LoadConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the connection stands; the name goes into error messages.
    enum Stage: String {
        case connecting = "connecting"
        case awaitingConnectReply = "waiting for the CONNECT reply"
        case awaitingSOCKSMethod = "waiting for the SOCKS5 method"
        case awaitingSOCKSReply = "waiting for the SOCKS5 reply"
        case handshaking = "in the TLS handshake"
        case idle = "idle"
        case awaitingResponse = "waiting for the response"
        case http2 = "over HTTP/2"
        case finished = "finished"
    }

    private let worker: any LoadConnectionOwner
    private let plan: LoadPlan
    private var context: ChannelHandlerContext?
    private var scanner = HTTPResponseScanner()
    /// SOCKS5 answers read so far.
    private var socksAnswer: [UInt8] = []
    private(set) var stage = Stage.connecting
    /// What ALPN chose in the handshake (nil: no TLS yet, or the server chose nothing).
    private(set) var negotiatedProtocol: String?

    init(worker: any LoadConnectionOwner, plan: LoadPlan) {
        self.worker = worker
        self.plan = plan
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        guard stage == .connecting else { return }
        if plan.tunnels && plan.socks5 {
            stage = .awaitingSOCKSMethod
            context.writeAndFlush(wrapOutboundOut(plan.socksGreeting), promise: nil)
        } else if plan.tunnels {
            stage = .awaitingConnectReply
            scanner.reset(bodyless: true)
            context.writeAndFlush(wrapOutboundOut(plan.connectRequest), promise: nil)
        } else if plan.tlsContext != nil {
            stage = .handshaking  // the TLS handler in front of us has started it
        } else {
            becomeReady()
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard stage != .http2 else { return context.fireChannelRead(data) }
        var buffer = unwrapInboundIn(data)
        switch stage {
        case .awaitingConnectReply:
            readConnectReply(context: context, &buffer)
        case .awaitingSOCKSMethod, .awaitingSOCKSReply:
            readSOCKSAnswer(context: context, &buffer)
        case .awaitingResponse:
            readResponse(&buffer)
        case .finished:
            break
        case .connecting, .handshaking, .idle, .http2:
            fail(LoadError.unexpectedBytes(stage: stage))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if stage == .handshaking, case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            negotiatedProtocol = negotiated
            becomeReady()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if stage == .awaitingResponse {
            do {
                if case .complete(let status, _) = try scanner.endOfInput() {
                    responseEnded(status: status, connectionClose: true)
                }
            } catch {
                fail(LoadError.response(error))
            }
        }
        if stage != .finished {
            fail(LoadError.closedByPeer(stage: stage))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(stage == .handshaking ? LoadError.tlsHandshake(error) : LoadError.channel(error, stage: stage))
    }

    // MARK: - called by the worker

    /// Writes the plan's request; the worker is told when its response ended.
    func sendRequest() {
        guard stage == .idle, let context else { return }
        stage = .awaitingResponse
        scanner.reset(bodyless: false)
        context.writeAndFlush(wrapOutboundOut(plan.request), promise: nil)
    }

    /// Adds HTTP/2 (client side) after this handler, which becomes the connection's watcher;
    /// called by the HTTP/2 worker when `ready`. Streams are opened on the multiplexer.
    func startHTTP2() throws -> NIOHTTP2Handler.StreamMultiplexer {
        guard stage == .idle, let context else { throw ChannelError.ioOnClosedChannel }
        let operations = context.pipeline.syncOperations
        let multiplexer = try operations.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: plan.http2Connection, streamConfiguration: plan.http2Stream,
            position: .last, inboundStreamInitializer: { pushed in pushed.close() })
        try operations.addHandler(LoadHTTP2ErrorTap(connection: self))
        stage = .http2
        return multiplexer
    }

    /// Dials the plan's address for this handler, with TLS in front of it unless the plan
    /// tunnels (then TLS comes after the CONNECT reply). A failed dial is reported as one.
    func connect(on loop: any EventLoop) {
        let boundHandler = NIOLoopBound(self, eventLoop: loop)
        let plan = self.plan
        ClientBootstrap(group: loop)
            .connectTimeout(plan.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if !plan.tunnels, let tls = try plan.makeTLSHandler() {
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    try channel.pipeline.syncOperations.addHandler(boundHandler.value)
                }
            }
            .connect(to: plan.connectAddress)
            .assumeIsolated()
            .whenFailure { error in self.connectFailed(error) }
    }

    /// Closes the connection without reporting anything more.
    func close() {
        stage = .finished
        context?.close(promise: nil)
    }

    /// The connect itself failed (refused, timed out, or the pipeline could not be set up).
    func connectFailed(_ error: any Error) {
        fail(LoadError.connect(error))
    }

    /// Fails the connection with a timeout in its current stage.
    func timeOut() {
        fail(LoadError.timedOut(stage: stage, after: plan.timeout))
    }

    // MARK: - private

    private func becomeReady() {
        stage = .idle
        worker.connectionReady(self)
    }

    private func readConnectReply(context: ChannelHandlerContext, _ buffer: inout ByteBuffer) {
        let outcome: HTTPResponseScanner.Outcome
        do {
            outcome = try scanner.scan(&buffer)
        } catch {
            return fail(LoadError.response(error))
        }
        guard case .complete(let status, _) = outcome else { return }
        guard status == 200 else { return fail(LoadError.connectRefused(status: status)) }
        guard buffer.readableBytes == 0 else { return fail(LoadError.unexpectedBytes(stage: stage)) }
        do {
            guard let tls = try plan.makeTLSHandler() else { return fail(LoadError.unexpectedBytes(stage: stage)) }
            stage = .handshaking
            try context.pipeline.syncOperations.addHandler(tls, position: .first)
        } catch {
            fail(LoadError.tlsHandshake(error))
        }
    }

    /// The method answer (`05 00`), then the reply (`05 00 00 ATYP ADDR PORT`); after it the
    /// tunnel is open as after a CONNECT's 200.
    private func readSOCKSAnswer(context: ChannelHandlerContext, _ buffer: inout ByteBuffer) {
        socksAnswer += buffer.readBytes(length: buffer.readableBytes) ?? []
        if stage == .awaitingSOCKSMethod {
            guard socksAnswer.count >= 2 else { return }
            guard socksAnswer[0] == 0x05, socksAnswer[1] == 0x00 else {
                return fail(LoadError.socksRefused(step: "greeting", answer: socksAnswer))
            }
            socksAnswer.removeFirst(2)
            stage = .awaitingSOCKSReply
            context.writeAndFlush(wrapOutboundOut(plan.socksRequest), promise: nil)
        }
        guard socksAnswer.count >= 5 else { return }
        let length: Int
        switch socksAnswer[3] {
        case 0x01: length = 10
        case 0x04: length = 22
        default: length = 7 + Int(socksAnswer[4])
        }
        guard socksAnswer.count >= length else { return }
        guard socksAnswer[0] == 0x05, socksAnswer[1] == 0x00 else {
            return fail(LoadError.socksRefused(step: "CONNECT", answer: Array(socksAnswer.prefix(length))))
        }
        guard socksAnswer.count == length else { return fail(LoadError.unexpectedBytes(stage: stage)) }
        socksAnswer = []
        do {
            if let tls = try plan.makeTLSHandler() {
                stage = .handshaking
                try context.pipeline.syncOperations.addHandler(tls, position: .first)
            } else {
                becomeReady()
            }
        } catch {
            fail(LoadError.tlsHandshake(error))
        }
    }

    private func readResponse(_ buffer: inout ByteBuffer) {
        do {
            guard case .complete(let status, let connectionClose) = try scanner.scan(&buffer) else { return }
            guard buffer.readableBytes == 0 else { return fail(LoadError.unexpectedBytes(stage: .idle)) }
            responseEnded(status: status, connectionClose: connectionClose)
        } catch {
            fail(LoadError.response(error))
        }
    }

    private func responseEnded(status: Int, connectionClose: Bool) {
        stage = .idle
        worker.responseEnded(self, status: status, connectionClose: connectionClose)
    }

    /// Closes the connection and reports `error` as its one outcome (unless it already had one).
    func fail(_ error: LoadError) {
        guard stage != .finished else { return }
        stage = .finished
        context?.close(promise: nil)
        worker.connectionFailed(self, error: error)
    }
}

/// The last handler of an `--h2` connection: NIOHTTP2Handler's own errors (a protocol error
/// before it closes the connection) go down the pipeline, past `LoadConnectionHandler`; this
/// hands them back to it, so the run names the error rather than only the close.
/// The connection-level frames NIOHTTP2 passes on end here too, unread.
private final class LoadHTTP2ErrorTap: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: LoadConnectionHandler

    init(connection: LoadConnectionHandler) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.fail(.channel(error, stage: .http2))
    }
}
