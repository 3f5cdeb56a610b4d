import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A NIOSSL (BoringSSL) client: the kind of client a Swift or Chromium-based app is.
enum NIOSSLTestClient {
    struct Result {
        var handshakeSucceeded: Bool
    }

    /// Connects to 127.0.0.1:`port` as `localhost`, trusting only `certificate`, or the system's
    /// roots when nil. With `resetAfterHandshake`, a completed handshake is followed by a TCP
    /// reset (SO_LINGER 0) instead of a TLS close.
    static func connect(port: Int, trusting certificate: NIOSSLCertificate?, resetAfterHandshake: Bool = false)
        async throws -> Result
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let result = try await connect(group: group, port: port, trusting: certificate, resetAfterHandshake: resetAfterHandshake)
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func connect(group: any EventLoopGroup, port: Int, trusting certificate: NIOSSLCertificate?,
                                resetAfterHandshake: Bool) async throws -> Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let certificate {
            configuration.trustRoots = .certificates([certificate])
        }
        let context = try NIOSSLContext(configuration: configuration)
        let handshake = group.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                // First in the pipeline, so closing through it skips the TLS close_notify exchange.
                try channel.pipeline.syncOperations.addHandler(RawCloser(), name: RawCloser.name)
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: handshake))
            }
        }.connect(host: "127.0.0.1", port: port).get()
        let succeeded = (try? await handshake.futureResult.get()) != nil
        if succeeded, resetAfterHandshake {
            try await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.context(name: RawCloser.name).close(promise: nil)
            }.get()
        } else {
            channel.close(promise: nil)
        }
        try await channel.closeFuture.get()
        return Result(handshakeSucceeded: succeeded)
    }
}

/// A TCP client that sends some bytes and leaves, with a FIN or a reset.
enum RawTCPClient {
    static func send(_ bytes: [UInt8], toPort port: Int, reset: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
            if reset {
                try await (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            do {
                try await channel.close()
            } catch ChannelError.alreadyClosed {
                // The server hung up first (it answers plain HTTP with an alert and closes).
            }
            try await group.shutdownGracefully()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }
}

/// Does nothing but give the test a context at the head of the pipeline to close from.
private final class RawCloser: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    static let name = "raw-closer"
}

/// Completes `promise` when the TLS handshake completes, fails it on the first error.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            promise?.succeed()
            promise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise?.fail(error)
        promise = nil
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }
}
