import NIOCore
import NIOEmbedded
import NIOSSL
import NIOTLS
import ProxyTLS

/// A TLS handshake between a NIOSSL client that trusts only `root` and a NIOSSL server that
/// presents a minted leaf, over two `EmbeddedChannel`s: proof that a real TLS stack (BoringSSL)
/// accepts the chain and that the key matches the leaf.
enum InMemoryHandshake {
    enum Outcome: Equatable {
        case completed
        case failed(String)
    }

    /// `serverHostname` nil makes the client check the leaf against the address it "connected" to.
    static func run(presenting leaf: MintedLeaf, trusting rootDER: [UInt8], serverHostname: String?,
                    address: SocketAddress) throws -> Outcome {
        let serverContext = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: leaf.certificateChain.map { .certificate($0) }, privateKey: .privateKey(leaf.privateKey)))
        var clientConfiguration = TLSConfiguration.makeClientConfiguration()
        clientConfiguration.trustRoots = .certificates([try NIOSSLCertificate(bytes: rootDER, format: .der)])
        clientConfiguration.certificateVerification = .fullVerification
        let clientContext = try NIOSSLContext(configuration: clientConfiguration)

        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        defer { closeBoth(client, server) }
        let completion = HandshakeCompletionRecorder()
        try client.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: clientContext, serverHostname: serverHostname))
        try client.pipeline.syncOperations.addHandler(completion)
        try server.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext))
        try server.connect(to: address).wait()
        try client.connect(to: address).wait()

        do { try shuttle(client, server) } catch {
            return .failed("\(error)")
        }
        return completion.completed ? .completed : .failed("the handshake did not finish")
    }

    /// Moves bytes both ways until neither side has anything left to send.
    private static func shuttle(_ client: EmbeddedChannel, _ server: EmbeddedChannel) throws {
        var moved = true
        while moved {
            moved = false
            while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                try server.writeInbound(bytes)
                moved = true
            }
            while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                try client.writeInbound(bytes)
                moved = true
            }
        }
    }

    /// NIOSSL holds a close until close_notify is answered or its shutdown timer fires: pass the
    /// alerts across, then let the (virtual) timer run out. Never waits on a future.
    private static func closeBoth(_ client: EmbeddedChannel, _ server: EmbeddedChannel) {
        client.close(promise: nil)
        server.close(promise: nil)
        try? shuttle(client, server)
        client.embeddedEventLoop.advanceTime(by: .seconds(60))
        server.embeddedEventLoop.advanceTime(by: .seconds(60))
    }
}

/// Notes the client's `handshakeCompleted` event.
private final class HandshakeCompletionRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private(set) var completed = false

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { completed = true }
        context.fireUserInboundEventTriggered(event)
    }
}
