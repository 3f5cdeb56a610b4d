import NIOCore

/// Sits in front of a server-side `NIOSSLHandler` (between it and the socket) during the
/// handshake and writes down, in `HandshakeWireEvidence`, what crossed the wire: our certificate
/// flight going out (and when its write completed), the records the client sent, and when its
/// input ended. The classifier needs this to tell a client that rejected our certificate from
/// one that failed the handshake before it could have seen it.
///
/// It looks only at record headers and a few handshake bytes, and leaves the pipeline once the
/// handshake is over (`handshakeFinished()`), so decrypted traffic never passes it.
public final class HandshakeWireRecorder: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    public private(set) var evidence = HandshakeWireEvidence()
    private var context: ChannelHandlerContext?
    /// Inside `channelRead`: removal waits until it returns (the TLS handler is processing).
    private var reading = false
    private var finished = false

    /// - Parameter clientInputAlreadyClosed: the client's end of input was seen before this
    ///   handler existed (a tunnel's sniffer held it): it came before our certificate.
    public init(clientInputAlreadyClosed: Bool = false) {
        if clientInputAlreadyClosed { evidence.clientInputEnded() }
    }

    /// The handshake completed or failed: nothing more to record; leave the pipeline.
    public func handshakeFinished() {
        finished = true
        if !reading { leave() }
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !finished {
            evidence.clientSent(unwrapInboundIn(data).readableBytesView)
        }
        reading = true
        context.fireChannelRead(data)
        reading = false
        if finished { leave() }
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { evidence.clientInputEnded() }
        context.fireUserInboundEventTriggered(event)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Errors from below the TLS handler are the socket's (a reset): the client's input ended.
        evidence.clientInputEnded()
        context.fireErrorCaught(error)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        evidence.clientInputEnded()
        context.fireChannelInactive()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !finished, evidence.serverWrote(unwrapOutboundIn(data).readableBytesView) else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenSuccess { self.evidence.certificateWriteCompleted() }
        context.write(data, promise: written)
    }

    private func leave() {
        guard let context else { return }
        self.context = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
