import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// A client that writes exactly the bytes a test gives it to the proxy, either directly or inside
/// an intercepted TLS tunnel (CONNECT, then TLS with the proxy's leaf), and collects what comes
/// back. `RawClient` does the plain case with blocking sockets; this one exists for the TLS case,
/// so one test can send the same hostile bytes both ways.
final class WireClient: Sendable {
    private let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    /// Connects to the proxy on 127.0.0.1:`proxyPort`. With `tunnel`, sends `CONNECT host:port`,
    /// expects `200`, and starts TLS for `host` trusting `trust` (the proxy's CA).
    static func connect(proxyPort: Int, group: any EventLoopGroup,
                        tunnel: (host: String, port: Int, trust: NIOSSLContext)? = nil) async throws -> WireClient {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: proxyPort)
            .get()
        let client = WireClient(channel: channel, collector: collector)
        guard let tunnel else { return client }
        do {
            try await client.send("CONNECT \(tunnel.host):\(tunnel.port) HTTP/1.1\r\nHost: \(tunnel.host):\(tunnel.port)\r\n\r\n")
            let reply = try await client.receive(timeout: 5) { $0.firstRange(of: Data("\r\n\r\n".utf8)) != nil }
            guard String(decoding: reply.prefix(12), as: UTF8.self) == "HTTP/1.1 200" else {
                throw WireError(description: "CONNECT answered \(String(decoding: reply.prefix(80), as: UTF8.self))")
            }
            collector.take()
            let handshake = channel.eventLoop.makePromise(of: Void.self)
            try await channel.eventLoop.submit {
                let tls = try NIOSSLClientHandler(context: tunnel.trust, serverHostname: tunnel.host)
                try channel.pipeline.syncOperations.addHandler(tls, position: .first)
                try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: handshake),
                                                               position: .after(tls))
            }.get()
            try await handshake.futureResult.get()
        } catch {
            client.close()
            throw error
        }
        return client
    }

    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes))
    }

    /// Waits until `done(received)` holds, the connection closes or `timeout` passes, and returns
    /// everything received so far (kept for the next call too, unless taken).
    @discardableResult
    func receive(timeout: TimeInterval, until done: (Data) -> Bool) async throws -> Data {
        let deadline = Date().addingTimeInterval(timeout)
        var polls = 0
        while Date() < deadline && polls < 100_000 {
            polls += 1
            let (data, closed) = collector.snapshot
            if done(data) || closed { return data }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        return collector.snapshot.data
    }

    /// Reads one response (`RawResponse`), removing it from what was received.
    func readResponse(noBody: Bool = false, timeout: TimeInterval = 10) async throws -> RawResponse {
        var parsed: (RawResponse, Int)?
        let data = try await receive(timeout: timeout) { data in
            parsed = try? RawResponse.parse(data, noBody: noBody, atEOF: false)
            return parsed != nil
        }
        if parsed == nil, collector.snapshot.closed {
            parsed = try RawResponse.parse(data, noBody: noBody, atEOF: true)
        }
        guard let (response, used) = parsed else {
            throw WireError(description: "no complete response within \(timeout)s; received: "
                            + String(decoding: data.prefix(300), as: UTF8.self))
        }
        collector.drop(used)
        return response
    }

    /// Whether the proxy has closed the connection.
    var isClosed: Bool { collector.snapshot.closed }

    func close() {
        channel.close(promise: nil)
    }

    struct WireError: Error, CustomStringConvertible {
        var description: String
    }

    /// Keeps every byte read (decrypted, once TLS is on) and whether the connection closed.
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        private let state = NIOLockedValueBox((data: Data(), closed: false))

        var snapshot: (data: Data, closed: Bool) { state.withLockedValue { $0 } }

        func take() {
            state.withLockedValue { $0.data = Data() }
        }

        func drop(_ count: Int) {
            state.withLockedValue { $0.data.removeFirst(min(count, $0.data.count)) }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            state.withLockedValue { $0.data.append(contentsOf: buffer.readableBytesView) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLockedValue { $0.closed = true }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event {
                state.withLockedValue { $0.closed = true }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// Completes `promise` once, when the TLS handshake finished or failed.
    private final class HandshakeWaiter: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private var promise: EventLoopPromise<Void>?

        init(promise: EventLoopPromise<Void>) {
            self.promise = promise
        }

        private func complete(_ result: Result<Void, any Error>) {
            promise?.completeWith(result)
            promise = nil
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event { complete(.success(())) }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            complete(.failure(error))
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            complete(.failure(ChannelError.eof))
            context.fireChannelInactive()
        }
    }
}
