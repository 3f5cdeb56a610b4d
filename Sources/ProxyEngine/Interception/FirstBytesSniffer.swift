import NIOCore

/// Holds the first bytes one side of a fresh CONNECT tunnel sends until they say what the
/// tunnel carries; then hands them, unconsumed, to whatever the decision installed after it,
/// and leaves.
///
/// On the client's connection (right after `200 Connection established`) it tells TLS, HTTP and
/// anything else apart (`FirstBytesClassifier`, one look per byte). On an origin connection the
/// tunnel opened to see whether the server speaks first, any byte decides. It keeps no timer:
/// `InterceptedTunnel` owns the waiting (`FirstSpeaker`). A half-close before a decision, or
/// more than `maxBytes` without a recognisable start, decides `.opaque`.
final class FirstBytesSniffer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Never

    /// Hears the decision (once) and the peer leaving before the handover.
    struct Callbacks {
        var decided: (FirstBytes) -> Void
        var closed: () -> Void
    }

    /// A ClientHello is at most 64 KiB plus record headers; anything longer is not one.
    static let maxBytes = 70 << 10

    private let classify: (ByteBufferView) -> FirstBytes
    private var callbacks: Callbacks?
    private var buffered: ByteBuffer?
    private var decided = false
    private var readPending = false
    private var context: ChannelHandlerContext?
    /// The peer half-closed before the handover (passed on with the bytes).
    private(set) var inputClosed = false

    init(classify: @escaping (ByteBufferView) -> FirstBytes, callbacks: Callbacks) {
        self.classify = classify
        self.callbacks = callbacks
    }

    /// For a client's first bytes: TLS, HTTP or anything else.
    static func client(callbacks: Callbacks) -> FirstBytesSniffer {
        var classifier = FirstBytesClassifier()
        return FirstBytesSniffer(classify: { classifier.classify($0) }, callbacks: callbacks)
    }

    /// For an origin's: any byte means it spoke first.
    static func origin(callbacks: Callbacks) -> FirstBytesSniffer {
        FirstBytesSniffer(classify: { $0.isEmpty ? .needMore : .opaque }, callbacks: callbacks)
    }

    /// How many bytes are held for the handover.
    var heldByteCount: Int { buffered?.readableBytes ?? 0 }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
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
        let kind = classify(buffered.readableBytesView)
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
        let callbacks = self.callbacks
        self.callbacks = nil
        callbacks?.closed()
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

    /// The tunnel decided without this side (a deadline, the other side spoke): stop
    /// classifying and hold reads until the handover.
    func settle() {
        decided = true
    }

    private func decide(_ kind: FirstBytes) {
        guard !decided else { return }
        decided = true
        callbacks?.decided(kind)
    }

    /// Passes the held bytes (and a half-close that came with them) to the handlers added
    /// after this one, then leaves the pipeline; reads resume.
    func handOver() {
        guard let context else { return }
        decided = true
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
