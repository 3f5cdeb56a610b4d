import NIOCore
import NIOHTTP1

/// One request of a `LoadHTTP2Worker` on its own stream, behind
/// `HTTP2FramePayloadToHTTP1ClientCodec`: sends the GET when the stream is active, reads the
/// response and tells the worker once, when it ended or when the stream failed first.
final class LoadHTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let startedAt: NIODeadline
    private let worker: LoadHTTP2Worker
    private let request: HTTPRequestHead
    private var status = 0
    private var sent = false
    private var reported = false

    init(worker: LoadHTTP2Worker, request: HTTPRequestHead, startedAt: NIODeadline) {
        self.worker = worker
        self.request = request
        self.startedAt = startedAt
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { send(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        send(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body:
            break
        case .end:
            guard !reported else { return }
            reported = true
            worker.streamEnded(self, status: status)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        report(.stream(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        report(.streamEndedEarly)
        context.fireChannelInactive()
    }

    private func send(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func report(_ error: LoadError) {
        guard !reported else { return }
        reported = true
        worker.streamFailed(self, error: error)
    }
}
