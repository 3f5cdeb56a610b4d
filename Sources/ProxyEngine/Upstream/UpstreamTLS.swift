import Foundation
import NIOCore
import NIOSSL
import NIOTLS
import ProxyCore
import ProxyTLS

/// How to speak TLS to one origin: the run's policy (its single client context: building one
/// costs milliseconds, so it is built once and shared) and the SNI name to send (nil for IP
/// targets: clients send none for them, and NIOSSL refuses an IP as SNI).
struct UpstreamTLSSettings: Sendable {
    let policy: UpstreamTLSPolicy
    let serverName: String?
    /// The request may go over HTTP/2 (not an upgrade), and the run allows it.
    var offersHTTP2 = false

    var context: NIOSSLContext {
        offersHTTP2 ? policy.http2Context ?? policy.context : policy.context
    }
}

/// What the TLS handshake with an origin established, kept with the connection so every flow
/// that uses it (pooled reuse included) records it.
struct UpstreamTLSSession: Sendable {
    var protocolVersion: TLSProtocolVersion?
    var certificate: PeerCertificateSummary?
    /// What the origin chose in ALPN (`h2`, `http/1.1`), if anything.
    var applicationProtocol: String?

    /// The version as recorded on flows (`TLSv1.3`).
    var version: String? { Self.versionText(protocolVersion?.nioVersion) }

    /// `TLSVersion` in the spelling users know from OpenSSL (`TLSv1.3`).
    static func versionText(_ version: TLSVersion?) -> String? {
        switch version {
        case .tlsv1: return "TLSv1"
        case .tlsv11: return "TLSv1.1"
        case .tlsv12: return "TLSv1.2"
        case .tlsv13: return "TLSv1.3"
        case nil: return nil
        }
    }
}

/// Waits for the TLS handshake of a new upstream connection and reports its outcome, so a
/// connection is handed to an exchange only once it is usable, and a certificate the origin
/// cannot prove is answered as a 502 naming the reason. A failure carries what the reason needs
/// (`UpstreamHandshakeFailure`): the certificate the verifier refused, or the origin's leaf when
/// it names other hosts, read while the TLS handler still holds them. It leaves the pipeline
/// when done.
final class UpstreamTLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<UpstreamTLSSession>
    private let verification: UpstreamVerificationLog?
    /// Puts the protocol's handlers on the channel once ALPN is known, before the origin's first
    /// application byte is read.
    private let installProtocol: ((UpstreamTLSSession) throws -> Void)?
    /// The name the origin's certificate must carry: the SNI sent, else the IP address.
    private let checkedName: String
    private var done = false

    /// The handshake did not finish within the connect timeout.
    struct TimedOut: Error {}

    init(promise: EventLoopPromise<UpstreamTLSSession>, checkedName: String, verification: UpstreamVerificationLog? = nil,
         installProtocol: ((UpstreamTLSSession) throws -> Void)? = nil) {
        self.promise = promise
        self.installProtocol = installProtocol
        self.checkedName = checkedName
        self.verification = verification
    }

    /// The outcome of the handshake on `channel` (which holds this handler), bounded by
    /// `timeout`; the channel is closed on failure.
    static func outcome(on channel: any Channel, timeout: TimeAmount) -> EventLoopFuture<UpstreamTLSSession> {
        guard let waiter = try? channel.pipeline.syncOperations.handler(type: UpstreamTLSHandshakeHandler.self) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(ChannelError.inappropriateOperationForState)
        }
        let timer = channel.eventLoop.assumeIsolated().scheduleTask(in: timeout) { waiter.timeOut() }
        return waiter.outcome
            .always { result in
                timer.cancel()
                if case .failure = result { channel.close(promise: nil) }
            }
    }

    /// Completes when the handshake did, or fails with what stopped it.
    var outcome: EventLoopFuture<UpstreamTLSSession> { promise.futureResult }

    /// Gives up on a handshake that is taking too long.
    func timeOut() {
        guard !done else { return }
        done = true
        promise.fail(TimedOut())
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event, !done {
            done = true
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
            let session = UpstreamTLSSession(
                protocolVersion: tls?.tlsVersion.map { TLSProtocolVersion($0) },
                certificate: tls?.peerCertificate.flatMap(PeerCertificateSummary.init),
                applicationProtocol: negotiated)
            do {
                try installProtocol?(session)
            } catch {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                promise.fail(error)
                return
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            promise.succeed(session)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            let leaf = (try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self))?.peerCertificate
            let problem = UpstreamTLSFailure.certificateProblem(
                for: error, leaf: leaf, verification: verification, checkedName: checkedName, now: Date())
            promise.fail(UpstreamHandshakeFailure(error: error, certificateProblem: problem))
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(ChannelError.eof)
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(ChannelError.ioOnClosedChannel)
        }
    }
}
