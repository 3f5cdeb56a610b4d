import ProxyTLS
import X509

/// Verifies a minted leaf the way a TLS client would: chain to the given root (the only trust
/// anchor; nothing from the machine's stores), RFC 5280 rules at the current time, and the
/// server identity (name or IP) it was minted for.
enum ChainVerification {
    static func verify(_ leaf: Certificate, root: Certificate, hostname: String?, ipAddress: String?) async
        -> CertificateValidationResult
    {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: hostname, serverIP: ipAddress)
        }
        return await verifier.validate(leaf: leaf, intermediates: CertificateStore())
    }

    static func isValid(_ result: CertificateValidationResult) -> Bool {
        if case .validCertificate = result { return true }
        return false
    }
}
