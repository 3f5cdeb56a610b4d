import NIOCore
import NIOHTTP1

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

/// The last handler of an upstream HTTP/1.1 connection: hands response parts to the exchange
/// that owns the connection and lets that exchange hold reads when the client is slow
/// (back-pressure).
///
/// While the connection sits idle in the pool it has no delegate; anything that happens then
/// (the origin closes it, it times out) just closes it and tells the pool.
final class UpstreamHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    weak var delegate: (any UpstreamHTTPHandlerDelegate)?
    /// Called once when the connection closes while idle in the pool.
    var onIdleClose: (() -> Void)?

    private var readsPaused = false
    private var readPending = false
    private var context: ChannelHandlerContext?

    /// Adds the HTTP client codec (informational responses forwarded, leftover bytes after an
    /// upgrade forwarded to whatever replaces the decoder), an idle timer and this handler.
    static func installPipeline(on pipeline: ChannelPipeline.SynchronousOperations, timeout: TimeAmount) throws {
        try pipeline.addHandler(IdleStateHandler(allTimeout: timeout))
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
        try pipeline.addHandler(UpstreamHTTPHandler())
    }

    /// Takes the HTTP handlers off an upgraded connection and puts `replacement` in their place;
    /// bytes the decoder read past the `101` response go to `replacement`.
    static func removePipeline(from channel: any Channel, replacingWith replacement: GlueHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(replacement)
        pipeline.removeHandler(try pipeline.handler(type: UpstreamHTTPHandler.self), promise: nil)
        pipeline.removeHandler(try pipeline.handler(type: IdleStateHandler.self), promise: nil)
        pipeline.removeHandler(try pipeline.handler(type: HTTPRequestEncoder.self), promise: nil)
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
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if let delegate {
            delegate.upstreamReceived(part)
        } else {
            // Nobody asked: an idle connection must not talk. Drop it.
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        delegate?.upstreamReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        delegate?.upstreamWritabilityChanged(isWritable: context.channel.isWritable)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let delegate = self.delegate
        self.delegate = nil
        delegate?.upstreamFailed(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let delegate {
            self.delegate = nil
            delegate.upstreamFailed(ChannelError.eof)
        } else {
            let onIdleClose = self.onIdleClose
            self.onIdleClose = nil
            onIdleClose?()
        }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            if let delegate {
                self.delegate = nil
                delegate.upstreamFailed(UpstreamTimeoutError())
            }
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
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
        context?.write(wrapOutboundOut(part), promise: nil)
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
        if readPending, let context {
            readPending = false
            context.read()
        }
    }
}

/// The origin sent nothing for the upstream timeout.
struct UpstreamTimeoutError: Error {}
