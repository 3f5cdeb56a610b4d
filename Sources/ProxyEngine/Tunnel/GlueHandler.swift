import NIOCore

/// Joins two channels so that bytes read from one are written to the other, with back-pressure
/// both ways and half-close honoured.
///
/// Used for CONNECT tunnels and for upgraded (WebSocket) connections once the HTTP handlers are
/// gone. Reads on one side are held while the other side is not writable. End of input on one
/// side becomes a half-close (`shutdown(SHUT_WR)`) of the other, and the pair closes fully once
/// a channel goes away. Both channels must live on the same event loop.
final class GlueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    /// Counts bytes read on this side; shared by the pair.
    private let meter: TunnelMeter?
    private let direction: TunnelMeter.Direction

    private init(meter: TunnelMeter?, direction: TunnelMeter.Direction) {
        self.meter = meter
        self.direction = direction
    }

    /// Two handlers that forward to each other: add `client` to the client's channel and
    /// `server` to the upstream channel.
    static func matchedPair(meter: TunnelMeter?) -> (client: GlueHandler, server: GlueHandler) {
        let client = GlueHandler(meter: meter, direction: .up)
        let server = GlueHandler(meter: meter, direction: .down)
        client.partner = server
        server.partner = client
        return (client, server)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.partner = nil
    }

    /// Flushes what this side forwarded to the partner outside a read cycle (bytes a removed
    /// decoder handed over, which arrive without a `channelReadComplete`).
    func flushPartner() {
        partner?.partnerFlush()
    }

    // MARK: called by the partner

    private func partnerWrite(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func partnerFlush() {
        context?.flush()
    }

    private func partnerWriteEOF() {
        context?.close(mode: .output, promise: nil)
    }

    private func partnerCloseFull() {
        context?.close(promise: nil)
    }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    private var partnerWritable: Bool {
        context?.channel.isWritable ?? false
    }

    // MARK: channel events

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        meter?.carried(buffer, direction: direction)
        partner?.partnerWrite(buffer)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        meter?.readComplete()
        partner?.partnerFlush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.partnerCloseFull()
        meter?.sideClosed()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            partner?.partnerWriteEOF()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        meter?.noteError(error, direction: direction)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            partner?.partnerBecameWritable()
        }
    }

    func read(context: ChannelHandlerContext) {
        if let partner, partner.partnerWritable {
            context.read()
        } else {
            pendingRead = true
        }
    }
}
