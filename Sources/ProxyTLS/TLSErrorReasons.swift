import NIOSSL

/// The BoringSSL reason names (`TLSV1_ALERT_PROTOCOL_VERSION`, `CERTIFICATE_VERIFY_FAILED`…) in
/// an error NIOSSL raised, during the handshake or after it.
///
/// It exists because NIOSSL reports what went wrong only as BoringSSL's error stack: the reason
/// names are the stable part of it (codes and file positions change between versions), and both
/// legs of interception decide on them.
public enum TLSErrorReasons {
    /// The reason names in `error`; empty for errors that carry no BoringSSL stack.
    public static func names(in error: any Error) -> Set<String> {
        let stack: NIOBoringSSLErrorStack
        switch error {
        case NIOSSLError.handshakeFailed(.sslError(let errors)), NIOSSLError.shutdownFailed(.sslError(let errors)):
            stack = errors
        case BoringSSLError.sslError(let errors), BoringSSLError.unknownError(let errors):
            stack = errors
        default:
            return []
        }
        return Set(stack.compactMap(HandshakeFailureClassifier.reasonName))
    }

    /// The TLS alert a peer sent, by BoringSSL's reason name (`TLSV1_ALERT_…`/`SSLV3_ALERT_…`),
    /// as its RFC 8446 name: `protocol_version`; nil when `names` hold no received alert.
    public static func receivedAlert(in names: Set<String>) -> String? {
        for name in names.sorted() {
            for prefix in ["TLSV1_ALERT_", "SSLV3_ALERT_"] where name.hasPrefix(prefix) {
                return name.dropFirst(prefix.count).lowercased()
            }
        }
        return nil
    }
}
