import NIOCore
import ProxyCore

/// Refuses a client whose address `--allow-clients` does not admit, in the protocol it speaks:
/// it waits (at most `wait`) for the first byte, then answers a SOCKS5 greeting with "no
/// acceptable method" (`05 FF`), SOCKS4 with "request rejected", and anything else, or silence,
/// with the HTTP `403` naming the flag; then closes. Nothing the client sends is read further.
///
/// The connection limit's `503` does not wait (`ConnectionLimitRefusalHandler`): under a flood
/// a descriptor must not be held for a client's first byte.
final class ClientRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let httpResponse: ByteBuffer
    private let wait: TimeAmount
    private var timer = DeadlineTimer()
    private var answered = false

    init(httpResponse: ByteBuffer, wait: TimeAmount = .seconds(1)) {
        self.httpResponse = httpResponse
        self.wait = wait
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer.schedule(at: .now() + wait, on: context.eventLoop) { [weak self, weak context] in
            guard let self, let context else { return }
            self.answer(self.httpResponse, context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        let buffer = unwrapInboundIn(data)
        switch buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) {
        case 0x05?: answer(context.channel.allocator.buffer(bytes: SOCKSRefusal.noAcceptableMethod), context)
        case 0x04?: answer(context.channel.allocator.buffer(bytes: SOCKSRefusal.socks4Rejected), context)
        case .some: answer(httpResponse, context)
        case nil: return
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(_ bytes: ByteBuffer, _ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        timer.cancel()
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }
}
