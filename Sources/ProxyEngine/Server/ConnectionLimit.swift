import Atomics
import NIOCore
import NIOHTTP1
import ProxyCore

/// Counts the client connections open on all event loops and refuses those above
/// `--max-connections`, so a flood meets a `503` while the proxy still has descriptors for the
/// connections it serves.
///
/// One atomic counter shared by every loop: a slot is taken when a connection is accepted and
/// given back when its channel closes (the close future completes exactly once, however the
/// connection ends: either side closing, an error, shutdown, or a pipeline that failed to build).
final class ConnectionLimit: Sendable {
    let maximum: Int
    /// The 503 a refused connection gets, built once.
    let refusal: ByteBuffer
    private let open = ManagedAtomic<Int>(0)

    init(maximum: Int) {
        self.maximum = maximum
        self.refusal = ByteBuffer(string: Self.refusalResponse(limit: maximum))
    }

    /// Client connections holding a slot now.
    var current: Int {
        open.load(ordering: .relaxed)
    }

    /// Takes a slot for `channel`, released when it closes; false when all are taken (nothing
    /// is held then).
    func admit(_ channel: any Channel) -> Bool {
        guard tryAcquire() else { return false }
        channel.closeFuture.whenComplete { _ in self.release() }
        return true
    }

    /// Takes a slot if one is free. Racing loops may each see the count one too high for a
    /// moment and refuse; they never admit more than `maximum`.
    func tryAcquire() -> Bool {
        guard open.wrappingIncrementThenLoad(ordering: .relaxed) <= maximum else {
            open.wrappingDecrement(ordering: .relaxed)
            return false
        }
        return true
    }

    func release() {
        open.wrappingDecrement(ordering: .relaxed)
    }

    /// The whole answer to a connection above the limit: `503`, the reason in RFC 9209's
    /// `Proxy-Status` (`connection_limit_reached`) and a one-line body naming the limit and
    /// the flag, then the connection closes.
    static func refusalResponse(limit: Int) -> String {
        let body = refusalBody(limit: limit)
        let status = refusalProxyStatus(limit: limit)
        return "HTTP/1.1 503 Service Unavailable\r\n"
            + "Proxy-Status: \(status)\r\n"
            + "Retry-After: 1\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n"
            + body
    }
}

extension ConnectionLimit {
    static func refusalBody(limit: Int) -> String {
        "ProxyApp is serving its limit of \(limit) connections (--max-connections); try again shortly.\n"
    }

    static func refusalProxyStatus(limit: Int) -> String {
        ProxyFailure.proxyStatusHeader(
            error: "connection_limit_reached", details: "client connections at the limit of \(limit) (--max-connections)")
    }
}

/// The whole pipeline of a connection `ConnectionLimit` refused: writes the prepared 503 as
/// soon as the connection is up and closes once it is written. Whatever the client sends is
/// dropped unread (no HTTP decoder is ever built for it).
///
/// Closing with the request unread makes Linux send a reset instead of a FIN, but the 503
/// written before it stays readable by the client (measured: curl and raw sockets see it).
final class ConnectionLimitRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: ByteBuffer
    private var answered = false

    init(response: ByteBuffer) {
        self.response = response
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { answer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        answer(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// The raw HTTP answer to a connection refused before any request was read (an address
/// outside `--allow-clients`): the failure's status, `Proxy-Status` and one-line body, then close.
enum ClientRefusal {
    static func response(_ failure: ProxyFailure) -> String {
        let body = failure.message + "\n"
        let status = HTTPResponseStatusText.line(failure.statusCode)
        return "HTTP/1.1 \(status)\r\n"
            + "Proxy-Status: \(failure.proxyStatusHeader)\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n"
            + body
    }
}

/// `403 Forbidden`: a status code and NIO's reason phrase for it.
enum HTTPResponseStatusText {
    static func line(_ code: Int) -> String {
        "\(code) \(HTTPResponseStatus(statusCode: code).reasonPhrase)"
    }
}
