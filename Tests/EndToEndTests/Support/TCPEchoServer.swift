import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A raw TCP server on 127.0.0.1 that echoes every byte: the target of CONNECT tunnels.
///
/// It counts connections and bytes so tests can check that a tunnel really reached it.
final class TCPEchoServer: Sendable {
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: NIOLockedValueBox<(connections: Int, bytes: Int)>

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel,
                 counters: NIOLockedValueBox<(connections: Int, bytes: Int)>) {
        self.port = port
        self.group = group
        self.channel = channel
        self.counters = counters
    }

    /// - Parameter greeting: written as soon as a connection opens, like an SMTP or IMAP server
    ///   that speaks first.
    static func start(greeting: String? = nil) async throws -> TCPEchoServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = NIOLockedValueBox((connections: 0, bytes: 0))
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelInitializer { channel in
                    counters.withLockedValue { $0.connections += 1 }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteEchoHandler { count in
                            counters.withLockedValue { $0.bytes += count }
                        })
                        if let greeting {
                            channel.writeAndFlush(ByteBuffer(string: greeting), promise: nil)
                        }
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else {
                throw ChannelError.unknownLocalAddress
            }
            return TCPEchoServer(port: port, group: group, channel: channel, counters: counters)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    var acceptedConnections: Int { counters.withLockedValue { $0.connections } }
    var bytesReceived: Int { counters.withLockedValue { $0.bytes } }

    func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}
