import NIOCore

/// Sits alone in a client pipeline right after `200 Connection established` and holds the
/// client's first bytes until they say what the tunnel carries (TLS, HTTP, anything else);
/// then hands them, unconsumed, to whatever the decision installed after it, and leaves.
///
/// No byte for `timeout` means a protocol where the server speaks first (SMTP, IMAP): that is
/// decided as `.opaque`, and so is a start that is still undecided after `timeout` (a stalled
/// prefix of a ClientHello or request line), a client that half-closes, or more than `maxBytes`
/// without a recognisable start.
final class FirstBytesSniffer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Never

    /// Hears the decision (once) and the client leaving before the handover.
    struct Callbacks {
        var decided: (FirstBytes) -> Void
        var clientClosed: () -> Void
    }

    /// A ClientHello is at most 64 KiB plus record headers; anything longer is not one.
    static let maxBytes = 70 << 10

    private let timeout: TimeAmount
    private var callbacks: Callbacks?
    private var buffered: ByteBuffer?
    private var decided = false
    private var inputClosed = false
    private var readPending = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(timeout: TimeAmount, callbacks: Callbacks) {
        self.timeout = timeout
        self.callbacks = callbacks
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            loopBound.value.decide(.opaque)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
        callbacks = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        guard !decided, let buffered else { return }
        let kind = FirstBytes.classify(buffered)
        if kind != .needMore {
            decide(kind)
        } else if buffered.readableBytes > Self.maxBytes {
            decide(.opaque)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if !decided { decide(.opaque) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        let callbacks = self.callbacks
        self.callbacks = nil
        callbacks?.clientClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Reads wait once a decision is made: nothing more is needed until the handover.
    func read(context: ChannelHandlerContext) {
        if decided {
            readPending = true
        } else {
            context.read()
        }
    }

    private func decide(_ kind: FirstBytes) {
        guard !decided else { return }
        decided = true
        timer?.cancel()
        callbacks?.decided(kind)
    }

    /// Passes the held bytes (and a half-close that came with them) to the handlers added
    /// after this one, then leaves the pipeline; reads resume.
    func handOver() {
        guard let context else { return }
        callbacks = nil
        if let buffered {
            self.buffered = nil
            context.fireChannelRead(wrapInboundOut(buffered))
            context.fireChannelReadComplete()
        }
        if inputClosed {
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        let channel = context.channel
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        if readPending || channel.isActive {
            channel.read()
        }
    }
}
