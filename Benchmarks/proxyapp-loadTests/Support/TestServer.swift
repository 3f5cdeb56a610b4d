import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A loopback server for the load generator's tests. It answers every GET with a 5-byte body
/// (closing after it when asked to), and in `.tunnelling` mode it plays an intercepting proxy:
/// it answers CONNECT with 200 and serves the same responses over TLS inside the tunnel.
/// `.silent` accepts and never answers. It counts connections and responses it wrote.
final class TestServer: Sendable {
    enum Mode: Sendable {
        case plain, tls, tunnelling, silent
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
        let tls = try authority?.serverContext()
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    counts.withLockedValue { $0.connections += 1 }
                    if mode == .tls, let tls {
                        try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try child.pipeline.syncOperations.addHandler(
                        TestResponder(mode: mode, tunnelContext: mode == .tunnelling ? tls : nil, counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
        self.counts = counts
    }

    var counted: Counts { counts.withLockedValue { $0 } }

    func close() throws {
        try channel.close().wait()
    }
}

/// Reads request heads (GET without body, or CONNECT) and answers each.
private final class TestResponder: ChannelInboundHandler {
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
            answer(head, context: context)
        }
    }

    private func answer(_ head: String, context: ChannelHandlerContext) {
        if head.hasPrefix("CONNECT "), let tunnelContext {
            self.tunnelContext = nil
            counts.withLockedValue { $0.connects += 1 }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n")), promise: nil)
            try? context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tunnelContext), position: .first)
            return
        }
        let close = head.lowercased().contains("connection: close")
        counts.withLockedValue { $0.responses += 1 }
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\(close ? "Connection: close\r\n" : "")\r\nhello"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
            if close { context.close(promise: nil) }
        }
    }
}
