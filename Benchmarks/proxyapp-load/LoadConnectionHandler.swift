import NIOCore
import NIOSSL
import NIOTLS

/// One connection of a worker: says CONNECT when the plan tunnels, adds TLS inside the tunnel,
/// tells its worker when a request can be sent, and finds where each response ends.
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
        case handshaking = "in the TLS handshake"
        case idle = "idle"
        case awaitingResponse = "waiting for the response"
        case finished = "finished"
    }

    private let worker: LoadWorker
    private let plan: LoadPlan
    private var context: ChannelHandlerContext?
    private var scanner = HTTPResponseScanner()
    private(set) var stage = Stage.connecting

    init(worker: LoadWorker, plan: LoadPlan) {
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
        if plan.tunnels {
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
        var buffer = unwrapInboundIn(data)
        switch stage {
        case .awaitingConnectReply:
            readConnectReply(context: context, &buffer)
        case .awaitingResponse:
            readResponse(&buffer)
        case .finished:
            break
        case .connecting, .handshaking, .idle:
            fail(LoadError.unexpectedBytes(stage: stage))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if stage == .handshaking, case TLSUserEvent.handshakeCompleted = event {
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

    private func fail(_ error: LoadError) {
        guard stage != .finished else { return }
        stage = .finished
        context?.close(promise: nil)
        worker.connectionFailed(self, error: error)
    }
}
