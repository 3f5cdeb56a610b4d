import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import ProxyTLS

/// A NIOSSL server on 127.0.0.1 that records what happened to the first connection it accepts:
/// every error `errorCaught` saw, each with whether the handshake had completed by then and what
/// a `HandshakeWireRecorder` in front of the TLS handler had seen cross the wire.
///
/// This is the server side of the proxy's interception, reduced to what the classifier reads.
final class HandshakeErrorServer {
    /// Errors are plain values handed over once, after the connection closed.
    struct CaughtError: @unchecked Sendable {
        var error: any Error
        var handshakeCompleted: Bool
        var wire: HandshakeWireEvidence
    }

    struct ConnectionOutcome: Sendable {
        var errors: [CaughtError]
        var handshakeCompleted: Bool
        /// The wire as the connection closed.
        var wire: HandshakeWireEvidence
    }

    struct NoConnection: Error {}

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let outcome: EventLoopFuture<ConnectionOutcome>

    init(identity: SelfSignedIdentity) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let context = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.privateKey)))
        let promise = group.next().makePromise(of: ConnectionOutcome.self)
        let once = OncePromise(promise)
        // Bounds every wait on the outcome: a client that never connects fails the test, not hangs it.
        group.next().scheduleTask(in: .seconds(30)) { once.fail(NoConnection()) }
        do {
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let wire = HandshakeWireRecorder()
                        try channel.pipeline.syncOperations.addHandler(wire)
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        try channel.pipeline.syncOperations.addHandler(HandshakeErrorRecorder(once: once, wire: wire))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.port = channel.localAddress?.port ?? 0
        self.outcome = promise.futureResult
    }

    /// What happened to the first connection, once it closed.
    func firstConnectionOutcome() async throws -> ConnectionOutcome {
        try await outcome.get()
    }

    func shutdown() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }
}

/// Completes a promise at most once, from any thread.
private final class OncePromise<Value: Sendable>: Sendable {
    private let promise: NIOLockedValueBox<EventLoopPromise<Value>?>

    init(_ promise: EventLoopPromise<Value>) {
        self.promise = NIOLockedValueBox(promise)
    }

    func succeed(_ value: Value) {
        promise.withLockedValue { promise in
            promise?.succeed(value)
            promise = nil
        }
    }

    func fail(_ error: any Error) {
        promise.withLockedValue { promise in
            promise?.fail(error)
            promise = nil
        }
    }
}

/// Sits behind `NIOSSLServerHandler` and writes down errors and the handshake's completion.
private final class HandshakeErrorRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let once: OncePromise<HandshakeErrorServer.ConnectionOutcome>
    private let wire: HandshakeWireRecorder
    private var errors: [HandshakeErrorServer.CaughtError] = []
    private var handshakeCompleted = false

    init(once: OncePromise<HandshakeErrorServer.ConnectionOutcome>, wire: HandshakeWireRecorder) {
        self.once = once
        self.wire = wire
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            handshakeCompleted = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.append(.init(error: error, handshakeCompleted: handshakeCompleted, wire: wire.evidence))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        once.succeed(.init(errors: errors, handshakeCompleted: handshakeCompleted, wire: wire.evidence))
        context.fireChannelInactive()
    }
}
