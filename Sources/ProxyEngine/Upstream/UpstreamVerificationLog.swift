import NIOSSL

/// Watches BoringSSL verify an origin's chain, without changing its verdict: how many
/// certificates passed, and the first one it refused. BoringSSL reports every verification
/// failure as one `CERTIFICATE_VERIFY_FAILED`; these two facts are what
/// `UpstreamCertificateProblem.diagnose` needs to say which check failed.
final class UpstreamVerificationLog {
    private(set) var passed = 0
    private(set) var refused: NIOSSLCertificate?

    /// NIOSSL's per-certificate verification callback; returns BoringSSL's own result.
    func observe(_ result: NIOSSLVerificationResult, _ certificate: NIOSSLCertificate) -> NIOSSLVerificationResult {
        guard refused == nil else { return result }
        switch result {
        case .certificateVerified: passed += 1
        case .failed: refused = certificate
        }
        return result
    }

    /// A TLS client handler for an origin whose verification `log` watches (nil: none).
    static func clientHandler(context: NIOSSLContext, serverName: String?,
                              log: UpstreamVerificationLog?) throws -> NIOSSLClientHandler {
        guard let log else { return try NIOSSLClientHandler(context: context, serverHostname: serverName) }
        let factory: any ObservingClientHandlerFactory.Type = ObservingClientHandler.self
        return try factory.make(context: context, serverName: serverName, observe: log.observe)
    }
}

/// NIOSSL deprecates its per-certificate callback in favour of callbacks that replace
/// BoringSSL's verification; we only observe it, so we keep the old one. Reached through a
/// protocol requirement, so its deprecation warning is not repeated at every build.
private protocol ObservingClientHandlerFactory {
    static func make(context: NIOSSLContext, serverName: String?,
                     observe: @escaping NIOSSLVerificationCallback) throws -> NIOSSLClientHandler
}

private enum ObservingClientHandler: ObservingClientHandlerFactory {
    @available(*, deprecated, message: "uses NIOSSL's observe-only verification callback")
    static func make(context: NIOSSLContext, serverName: String?,
                     observe: @escaping NIOSSLVerificationCallback) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverName, verificationCallback: observe)
    }
}
