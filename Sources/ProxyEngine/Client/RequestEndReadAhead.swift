import NIOCore
import NIOHTTP1

/// Keeps a keep-alive client's socket in the event loop's read set while its complete request
/// waits for the response, so that a request costs no `epoll_ctl` calls.
///
/// `HTTPServerPipelineHandler` answers one request at a time: from a request's end to its
/// response's end it swallows `read()`. NIO then takes the socket out of epoll's read set after
/// that read cycle and puts it back when the response ends: two `epoll_ctl` system calls per
/// request on every keep-alive connection, about 2 % of the proxy's CPU (#19's profile).
///
/// This handler sits between the decoder and the pipelining handler. At the end of the read
/// cycle that delivered a request's end it asks for one read itself, from below the pipelining
/// handler, so the socket stays registered. It asks once per response: not again until a
/// response's end has been written. Nothing else changes:
/// - what that read brings (a pipelined request) is queued by the pipelining handler as before,
///   and the read after it is swallowed as before, so at most one read cycle more waits in
///   memory than without this handler;
/// - an end of input is seen as before (NIO reads to the FIN even while reads are held);
/// - reads the exchange holds for back-pressure (`ClientHTTPHandler.read`) hold the request's
///   body, which has been read by the time this handler asks;
/// - after `CONNECT` or a request asking an `Upgrade` it asks nothing: those connections become
///   relays whose reads the relay paces.
final class RequestEndReadAhead: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The current request may be read past: it neither tunnels nor upgrades.
    private var requestMayReadAhead = false
    /// A request ended in this read cycle and nothing of the next one followed it.
    private var readAheadDue = false
    /// This response's read ahead was asked for: a pipelined request after it waits unread.
    private var readAheadSpent = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            readAheadDue = false
            requestMayReadAhead = head.method != .CONNECT && !head.headers.contains(name: "upgrade")
        case .body:
            readAheadDue = false
        case .end:
            readAheadDue = requestMayReadAhead
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        guard readAheadDue else { return }
        readAheadDue = false
        guard !readAheadSpent else { return }
        readAheadSpent = true
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            readAheadSpent = false
        }
        context.write(data, promise: promise)
    }
}
