import NIOCore

/// Writes back every byte it reads; closes once the peer has half-closed and everything read
/// has been written back.
///
/// It is the far end of CONNECT tunnels (`TCPEchoServer`) and of upgraded connections (the test
/// origin's `/upgrade` route), so a test can check bytes crossed the proxy both ways.
final class ByteEchoHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let onBytes: (@Sendable (Int) -> Void)?
    private var lastWrite: EventLoopFuture<Void>?

    /// - Parameter onBytes: told how many bytes each read carried.
    init(onBytes: (@Sendable (Int) -> Void)? = nil) {
        self.onBytes = onBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        onBytes?(buffer.readableBytes)
        lastWrite = context.write(wrapOutboundOut(buffer))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            context.flush()
            let channel = context.channel
            if let lastWrite {
                lastWrite.whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
