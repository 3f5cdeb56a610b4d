import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 origin server on 127.0.0.1 with an ephemeral port, on its own event loop.
///
/// The proxy under test forwards to it; its `OriginLog` lets tests check what crossed the proxy
/// (request line, headers, body, how many upstream connections were opened). Routes are listed
/// on `OriginHandler`. Call `shutdown()` when done.
final class TestOrigin: Sendable {
    let port: Int
    /// The loopback address it listens on: `127.0.0.1` or `::1`.
    let host: String
    let log: OriginLog
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    private init(port: Int, host: String, log: OriginLog, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.host = host
        self.log = log
        self.group = group
        self.channel = channel
    }

    /// Listens on `host` (`127.0.0.1` or `::1`), port 0; speaks TLS first when `tls` is given.
    static func start(host: String = "127.0.0.1", tls: NIOSSLContext? = nil) async throws -> TestOrigin {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = OriginLog()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelInitializer { channel in
                    let number = log.connectionAccepted()
                    channel.closeFuture.whenComplete { _ in log.connectionClosed() }
                    return channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let tls {
                            try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                        }
                        try pipeline.configureHTTPServerPipeline(
                            withPipeliningAssistance: true,
                            // No upgraders: this only makes the decoder keep the bytes after an
                            // upgrade request, which the `/upgrade` route hands to its echo handler.
                            withServerUpgrade: (upgraders: [], completionHandler: { _ in }),
                            withErrorHandling: true)
                        try pipeline.addHandler(OriginHandler(log: log, connection: number))
                    }
                }
                .bind(host: host, port: 0)
                .get()
            guard let port = channel.localAddress?.port else {
                throw ChannelError.unknownLocalAddress
            }
            return TestOrigin(port: port, host: host, log: log, group: group, channel: channel)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `127.0.0.1:port` or `[::1]:port`
    var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `http://` + `authority` + `path`.
    func url(_ path: String) -> String { "http://\(authority)\(path)" }

    /// Stops listening and closes every connection.
    func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}
