import NIOCore
import NIOHTTP2

/// Sends a response head that is followed at once by its end as one HEADERS frame with
/// END_STREAM, as the origin sent it.
///
/// NIOHTTP2's server codec writes a head as HEADERS and a bare end as an empty DATA frame with
/// END_STREAM. For HTTP that means the same, but gRPC clients read a "trailers-only" response
/// (status in one HEADERS frame that ends the stream, how a gRPC server reports an error before
/// any message) only in that one-frame form: split in two, grpc-core reports "Stream removed"
/// instead of the server's status. So a HEADERS frame without END_STREAM waits here until the
/// next write or flush; an empty DATA frame with END_STREAM right behind it is folded into it.
final class HeadersEndCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var held: (headers: HTTP2Frame.FramePayload.Headers, promise: EventLoopPromise<Void>?)?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        if let (headers, heldPromise) = held {
            held = nil
            if case .data(let data) = payload, data.endStream, data.data.readableBytes == 0 {
                var ending = headers
                ending.endStream = true
                heldPromise?.futureResult.cascade(to: promise)
                context.write(wrapOutboundOut(.headers(ending)), promise: heldPromise ?? promise)
                return
            }
            context.write(wrapOutboundOut(.headers(headers)), promise: heldPromise)
        }
        if case .headers(let headers) = payload, !headers.endStream {
            held = (headers, promise)
            return
        }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        writeHeld(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if held != nil {
            writeHeld(context: context)
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writeHeld(context: context)
    }

    private func writeHeld(context: ChannelHandlerContext) {
        guard let (headers, promise) = held else { return }
        held = nil
        context.write(wrapOutboundOut(.headers(headers)), promise: promise)
    }
}
