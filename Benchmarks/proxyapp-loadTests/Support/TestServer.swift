import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A loopback server for the load generator's tests. It answers every GET with a 5-byte body
/// (closing after it when asked to), and in `.tunnelling` mode it plays an intercepting proxy:
/// it answers CONNECT with 200 and serves the same responses over TLS inside the tunnel.
/// `.silent` accepts and never answers. `.h2` speaks HTTP/2 over TLS (ALPN h2) and answers every
/// stream the same way; `.h2Tunnelling` does so inside a CONNECT tunnel. It counts connections
/// and responses it wrote.
final class TestServer: Sendable {
    enum Mode: Sendable {
        case plain, tls, tunnelling, silent, h2, h2Tunnelling
    }

    struct Counts: Equatable, Sendable {
        var connections = 0
        var responses = 0
        var connects = 0
    }

    let port: Int
    private let channel: any Channel
    private let counts: NIOLockedValueBox<Counts>

    init(mode: Mode, authority: TestAuthority?, group: any EventLoopGroup) throws {
        let counts = NIOLockedValueBox(Counts())
        let http2 = mode == .h2 || mode == .h2Tunnelling
        let tls = try authority?.serverContext(protocols: http2 ? ["h2"] : ["http/1.1"])
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    counts.withLockedValue { $0.connections += 1 }
                    if mode == .h2, let tls {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                        return try Self.speakHTTP2(child.pipeline.syncOperations, counts: counts)
                    }
                    if mode == .tls, let tls {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    let tunnels = mode == .tunnelling || mode == .h2Tunnelling
                    try child.pipeline.syncOperations.addHandler(
                        TestResponder(mode: mode, tunnelContext: tunnels ? tls : nil, counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
        self.counts = counts
    }

    var counted: Counts { counts.withLockedValue { $0 } }

    /// Adds an HTTP/2 server after the TLS handler: every stream gets `TestHTTP2Responder`.
    fileprivate static func speakHTTP2(_ pipeline: ChannelPipeline.SynchronousOperations,
                                       counts: NIOLockedValueBox<Counts>) throws {
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandlers(
                        HTTP2FramePayloadToHTTP1ServerCodec(), TestHTTP2Responder(counts: counts))
                }
            }
    }

    func close() throws {
        try channel.close().wait()
    }
}

/// Reads request heads (GET without body, or CONNECT) and answers each. In `.h2Tunnelling` it
/// leaves after the CONNECT, for TLS and HTTP/2.
private final class TestResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let mode: TestServer.Mode
    private var tunnelContext: NIOSSLContext?
    private let counts: NIOLockedValueBox<TestServer.Counts>
    private var pending = ""

    init(mode: TestServer.Mode, tunnelContext: NIOSSLContext?, counts: NIOLockedValueBox<TestServer.Counts>) {
        self.mode = mode
        self.tunnelContext = tunnelContext
        self.counts = counts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard mode != .silent else { return }
        pending += String(buffer: unwrapInboundIn(data))
        while let end = pending.range(of: "\r\n\r\n") {
            let head = String(pending[..<end.upperBound])
            pending.removeSubrange(..<end.upperBound)
            if answer(head, context: context) == .handedOver { return }
        }
    }

    private enum Answered {
        case answered, handedOver
    }

    private func answer(_ head: String, context: ChannelHandlerContext) -> Answered {
        if head.hasPrefix("CONNECT "), let tunnelContext {
            self.tunnelContext = nil
            counts.withLockedValue { $0.connects += 1 }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n")), promise: nil)
            let operations = context.pipeline.syncOperations
            try? operations.addHandler(NIOSSLServerHandler(context: tunnelContext), position: .first)
            guard mode == .h2Tunnelling else { return .answered }
            do {
                try TestServer.speakHTTP2(operations, counts: counts)
                operations.removeHandler(context: context, promise: nil)
            } catch {
                context.close(promise: nil)
            }
            return .handedOver
        }
        let close = head.lowercased().contains("connection: close")
        counts.withLockedValue { $0.responses += 1 }
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\(close ? "Connection: close\r\n" : "")\r\nhello"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
            if close { context.close(promise: nil) }
        }
        return .answered
    }
}

/// Answers the one request of an HTTP/2 stream with 200 and a 5-byte body, once it ended.
private final class TestHTTP2Responder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let counts: NIOLockedValueBox<TestServer.Counts>

    init(counts: NIOLockedValueBox<TestServer.Counts>) {
        self.counts = counts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        counts.withLockedValue { $0.responses += 1 }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .ok, headers: ["content-length": "5"]))),
                      promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "hello")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
