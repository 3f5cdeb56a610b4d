import NIOCore
import ProxyCore
import ProxyTLS

/// Names the failure when an origin ends a TLS connection after the handshake because of our
/// client certificate (we have none): under TLS 1.3 the client's handshake completes before the
/// server checks the client's certificate, so its `certificate_required` alert arrives while
/// the response is awaited. Without this the exchange would see a closed connection and answer
/// "closed the connection before a complete response".
///
/// Sits after the TLS handler on upstream TLS channels; every other error passes unchanged.
final class UpstreamTLSAlertTranslator: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let host: String
    private let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if TLSErrorReasons.names(in: error).contains("TLSV1_ALERT_CERTIFICATE_REQUIRED") {
            context.fireErrorCaught(ProxyFailure.upstreamTLSFailed(
                host: host, port: port, reason: UpstreamTLSFailure.clientCertificateRequired))
            return
        }
        context.fireErrorCaught(error)
    }
}
