import EngineTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// An origin that keeps the exact bytes it received on every connection and answers each request
/// `StrictRequestParser` finds in them, in order, with `200` and the body `ok <target>`.
///
/// It behaves like a naive but standards-following origin behind a pooled proxy: bytes after a
/// complete request are read as the next request and answered too. So a body the proxy forwarded
/// without its framing shows up here as an extra request (smuggled), and its answer waits on the
/// connection for whoever the proxy sends next (poisoning). Bytes the strict parser refuses get a
/// `400` and a close, and are kept as an error.
final class RecordingOrigin: Sendable {
    /// One request as this origin parsed it, with the connection it came on.
    struct Received {
        var connection: Int
        var request: StrictRequestParser.Request
    }

    let port: Int
    private let state = NIOLockedValueBox(State())
    private let group: MultiThreadedEventLoopGroup
    private let channel: NIOLockedValueBox<(any Channel)?>

    private struct State {
        var requests: [Received] = []
        var errors: [String] = []
        var bytes: [Int: [UInt8]] = [:]
        var connections = 0
    }

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.group = group
        self.channel = NIOLockedValueBox(channel)
    }

    /// Listens on 127.0.0.1, port 0; speaks TLS first when `tls` is given.
    static func start(tls: NIOSSLContext? = nil) async throws -> RecordingOrigin {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = NIOLockedValueBox<RecordingOrigin?>(nil)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                        try pipeline.addHandler(Connection(origin: { box.withLockedValue { $0 } }))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            let origin = RecordingOrigin(port: port, group: group, channel: channel)
            box.withLockedValue { $0 = origin }
            return origin
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Every request parsed so far, in the order they arrived.
    var requests: [Received] { state.withLockedValue { $0.requests } }
    /// What the strict parser refused, one line per connection that broke.
    var errors: [String] { state.withLockedValue { $0.errors } }
    /// How many connections the proxy opened.
    var connections: Int { state.withLockedValue { $0.connections } }

    /// Requests whose target contains `marker`.
    func requests(containing marker: String) -> [Received] {
        requests.filter { $0.request.target.contains(marker) }
    }

    func shutdown() async {
        let channel = self.channel.withLockedValue { $0 }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func opened() -> Int {
        state.withLockedValue { state in
            state.connections += 1
            return state.connections
        }
    }

    /// Takes `bytes` read on `connection` and returns the answers to write, and whether to close.
    fileprivate func received(_ bytes: [UInt8], on connection: Int) -> (answers: [String], close: Bool) {
        state.withLockedValue { state in
            state.bytes[connection, default: []] += bytes
            var answers: [String] = []
            while let pending = state.bytes[connection], !pending.isEmpty {
                switch StrictRequestParser.parse(pending) {
                case .request(let request, let consumed):
                    state.bytes[connection] = Array(pending[consumed...])
                    state.requests.append(Received(connection: connection, request: request))
                    let body = "ok \(request.target)"
                    let head = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nX-Origin-Connection: \(connection)\r\n\r\n"
                    answers.append(request.method == "HEAD" ? head : head + body)
                case .needMoreData:
                    return (answers, false)
                case .invalid(let why):
                    state.errors.append("connection \(connection): \(why)")
                    state.bytes[connection] = []
                    answers.append("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    return (answers, true)
                }
            }
            return (answers, false)
        }
    }

    /// One accepted connection: bytes in, answers out.
    private final class Connection: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let origin: () -> RecordingOrigin?
        private var number = 0

        init(origin: @escaping () -> RecordingOrigin?) {
            self.origin = origin
        }

        func channelActive(context: ChannelHandlerContext) {
            number = origin()?.opened() ?? 0
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard let origin = origin() else { return }
            let buffer = unwrapInboundIn(data)
            let (answers, close) = origin.received(Array(buffer.readableBytesView), on: number)
            for answer in answers {
                context.write(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
            }
            if close {
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0))).whenComplete { _ in
                    context.close(promise: nil)
                }
            } else if !answers.isEmpty {
                context.flush()
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
