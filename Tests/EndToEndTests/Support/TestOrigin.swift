import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOTLS
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

    /// Listens on `host` (`127.0.0.1` or `::1`), port 0; speaks TLS first when `tls` is given,
    /// and HTTP/2 to a client that picks `h2` in ALPN when `tls` offers it (each stream is answered
    /// by an `OriginHandler` of its own, through NIOHTTP2's HTTP/1 view of the stream).
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
                            try pipeline.addHandler(ApplicationProtocolNegotiationHandler { result, channel in
                                channel.eventLoop.makeCompletedFuture {
                                    if case .negotiated("h2") = result {
                                        try configureHTTP2(channel, log: log, connection: number)
                                    } else {
                                        try configureHTTP1(channel, log: log, connection: number)
                                    }
                                }
                            })
                            return
                        }
                        try configureHTTP1(channel, log: log, connection: number)
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

    private static func configureHTTP1(_ channel: any Channel, log: OriginLog, connection number: Int) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: true,
            // No upgraders: this only makes the decoder keep the bytes after an
            // upgrade request, which the `/upgrade` route hands to its echo handler.
            withServerUpgrade: (upgraders: [], completionHandler: { _ in }),
            withErrorHandling: true)
        try pipeline.addHandler(OriginHandler(log: log, connection: number))
    }

    private static func configureHTTP2(_ channel: any Channel, log: OriginLog, connection number: Int) throws {
        var settings = NIOHTTP2Handler.ConnectionConfiguration()
        settings.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)]
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: settings, streamConfiguration: .init(),
            streamDelegate: StreamCounter(log: log, connection: number)
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(OriginHandler(log: log, connection: number))
            }
        }
    }

    /// Counts streams as HTTP/2 opens and closes them (a stream channel's own close comes later).
    private struct StreamCounter: NIOHTTP2StreamDelegate {
        let log: OriginLog
        let connection: Int

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            log.streamOpened(connection: connection)
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            log.streamClosed(connection: connection)
        }
    }

    /// What an HTTP/2 origin announces in `SETTINGS_MAX_CONCURRENT_STREAMS`.
    static let maxConcurrentStreams = 8

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
