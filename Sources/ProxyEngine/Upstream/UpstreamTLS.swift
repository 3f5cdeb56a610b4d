import Foundation
import NIOCore
import NIOSSL
import NIOTLS
import ProxyCore
import ProxyTLS

/// How to speak TLS to one origin: the run's single client context (building one costs
/// milliseconds: it is built once and shared) and the SNI name to send (nil for IP targets:
/// clients send none for them, and NIOSSL refuses an IP as SNI).
struct UpstreamTLSTarget: Sendable {
    let context: NIOSSLContext
    let serverName: String?
}

/// What the TLS handshake with an origin established, kept with the connection so every flow
/// that uses it (pooled reuse included) records it.
struct UpstreamTLSSession: Sendable {
    var version: String?
    var certificate: PeerCertificateSummary?

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
/// cannot prove is answered as a 502 naming the reason. It leaves the pipeline when done.
final class UpstreamTLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<UpstreamTLSSession>
    private var done = false

    /// The handshake did not finish within the connect timeout.
    struct TimedOut: Error {}

    init(promise: EventLoopPromise<UpstreamTLSSession>) {
        self.promise = promise
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
        if case TLSUserEvent.handshakeCompleted = event, !done {
            done = true
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
            let session = UpstreamTLSSession(
                version: UpstreamTLSSession.versionText(tls?.tlsVersion),
                certificate: tls?.peerCertificate.flatMap(PeerCertificateSummary.init))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            promise.succeed(session)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(error)
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

    /// The failure a client is answered with when the handshake with `host` failed.
    static func failure(for error: any Error, host: String, port: Int) -> ProxyFailure {
        let text = String(describing: error)
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return .upstreamCertificateInvalid(host: host, port: port, reason: "it does not name '\(host)' (\(extra))")
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return .upstreamCertificateInvalid(
                host: host, port: port,
                reason: "verification failed (unknown issuer, self-signed or expired); trust its CA with --upstream-ca FILE")
        }
        if case ChannelError.eof = error {
            return .upstreamTLSFailed(host: host, port: port, reason: "the origin closed the connection during the handshake")
        }
        return .upstreamTLSFailed(host: host, port: port, reason: text)
    }
}
