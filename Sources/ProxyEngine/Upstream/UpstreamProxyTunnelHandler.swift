import NIOCore
import ProxyCore

/// Opens the way through an upstream proxy on a freshly connected channel: writes what the
/// `UpstreamProxyHandshake` says, feeds it the proxy's answer, and reports the outcome on
/// `opened`, bounded by the connect timeout.
///
/// Once open it lets bytes through, handing on first whatever came from the destination with
/// the proxy's answer — at the first read asked for after the tunnel opened, so a raw relay's
/// glue (which reads only once it is in place) still gets a server-speaks-first greeting — and
/// then removes itself.
final class UpstreamProxyTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case opening
        /// Open; the bytes that came with the answer wait for the next read.
        case open(leftover: [UInt8])
        case finished
    }

    private var handshake: UpstreamProxyHandshake
    private let timeout: TimeAmount
    let opened: EventLoopPromise<Void>
    private var state = State.opening
    private var started = false
    private var timer: Scheduled<Void>?

    init(handshake: UpstreamProxyHandshake, timeout: TimeAmount, opened: EventLoopPromise<Void>) {
        self.handshake = handshake
        self.timeout = timeout
        self.opened = opened
    }

    private var proxyName: String { handshake.proxy.description }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { begin(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        begin(context: context)
        context.fireChannelActive()
    }

    private func begin(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let seconds = timeout.nanoseconds / 1_000_000_000
        let target = handshake.target
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.fail(context: context, reason: "did not open the way to \(target) within \(seconds)s")
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: handshake.start())), promise: nil)
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .opening = state else {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        switch handshake.receive(buffer.readableBytesView) {
        case .send(let bytes):
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .needMore:
            break
        case .established(let leftover):
            timer?.cancel()
            state = .open(leftover: leftover)
            opened.succeed(())
        case .failed(let reason):
            fail(context: context, reason: reason)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .opening = state {
            // Reads may be off (raw channels): the answer is still wanted.
            context.read()
            return
        }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        guard case .open(let leftover) = state else {
            context.read()
            return
        }
        state = .finished
        if !leftover.isEmpty {
            context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: leftover)))
            context.fireChannelReadComplete()
        }
        // Read first: once removed, this context passes nothing on.
        context.read()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(context: context, reason: "closed the connection before the way to \(handshake.target) was open")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard case .opening = state else {
            context.fireErrorCaught(error)
            return
        }
        fail(context: context, reason: SystemErrorText.describe(error, peer: .server))
    }

    private func fail(context: ChannelHandlerContext, reason: String) {
        guard case .opening = state else { return }
        state = .finished
        timer?.cancel()
        opened.fail(ProxyFailure.upstreamProxyFailed(proxy: proxyName, reason: reason))
        context.close(promise: nil)
    }
}
