import NIOCore
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells, from the error our TLS server saw, whether a client refused the certificate we
/// minted for it: the signal for "this client pins or does not trust us, tunnel it next time".
///
/// What rejection looks like was measured (see the tests, which provoke each case with real
/// clients): an explicit certificate alert (`unknown_ca` from BoringSSL clients and from OpenSSL
/// on TLS 1.2), or, from OpenSSL clients on TLS 1.3, an alert sent in clear after our key
/// change, which our side reports as `BAD_PACKET_LENGTH` / `DECRYPTION_FAILED_OR_BAD_RECORD_MAC`.
/// Clients that just hang up (Node, many pinning libraries) give no reason at all: that is
/// `.ambiguousEOF`, for the caller to count rather than trust. Nothing that happens after the
/// handshake completed is a signal: the client accepted the certificate.
public enum HandshakeFailureClassifier {
    /// What one handshake error says about the client's view of our certificate.
    public enum Classification: Sendable, Equatable {
        /// The client refused the handshake after seeing our certificate. `reason` is one line for
        /// people; `evidence` the error as NIOSSL reported it.
        case rejected(reason: String, evidence: String)
        /// The connection ended during the handshake without a reason: a pinning client, or
        /// just a client that went away.
        case ambiguousEOF(evidence: String)
        /// Not about our certificate (after the handshake, not TLS, a protocol mismatch…).
        case notAPinSignal
    }

    /// Alerts a client sends when it does not accept the server certificate (RFC 8446 §6.2),
    /// by BoringSSL's reason name. `access_denied` is left out: it is about authorization, which
    /// a client does not apply to a server certificate.
    static let certificateAlerts: [(reason: String, alert: String)] = [
        ("TLSV1_ALERT_UNKNOWN_CA", "unknown_ca"),
        ("SSLV3_ALERT_BAD_CERTIFICATE", "bad_certificate"),
        ("SSLV3_ALERT_CERTIFICATE_UNKNOWN", "certificate_unknown"),
        ("SSLV3_ALERT_UNSUPPORTED_CERTIFICATE", "unsupported_certificate"),
        ("SSLV3_ALERT_CERTIFICATE_EXPIRED", "certificate_expired"),
        ("SSLV3_ALERT_CERTIFICATE_REVOKED", "certificate_revoked"),
    ]

    /// Record-layer errors our server reports when a TLS 1.3 client's alert arrives unencrypted
    /// after we switched to handshake keys: the way OpenSSL clients refuse our certificate.
    static let cleartextAlertReasons: Set<String> = ["BAD_PACKET_LENGTH", "DECRYPTION_FAILED_OR_BAD_RECORD_MAC"]
    static let cleartextAlertReason = "client aborted the handshake after our certificate (an alert sent unencrypted "
        + "after the TLS 1.3 key change, as OpenSSL clients do when they reject it)"

    /// Classifies `error`, caught on a server-side TLS connection. `handshakeCompleted` says
    /// whether the handshake had completed before the error arrived.
    public static func classify(_ error: any Error, handshakeCompleted: Bool) -> Classification {
        guard !handshakeCompleted else { return .notAPinSignal }
        let evidence = String(describing: error)
        switch error {
        case NIOSSLError.handshakeFailed(.sslError(let stack)):
            let reasons = Set(stack.compactMap(reasonName))
            if let match = certificateAlerts.first(where: { reasons.contains($0.reason) }) {
                return .rejected(reason: "client rejected the certificate (\(match.alert) alert)", evidence: evidence)
            }
            if !reasons.isDisjoint(with: cleartextAlertReasons) {
                return .rejected(reason: cleartextAlertReason, evidence: evidence)
            }
            return stack.contains(.eofDuringHandshake) ? .ambiguousEOF(evidence: evidence) : .notAPinSignal
        case NIOSSLError.uncleanShutdown:
            return .ambiguousEOF(evidence: evidence)
        case let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode):  // a reset, read or written
            return .ambiguousEOF(evidence: evidence)
        default:
            return .notAPinSignal
        }
    }

    /// The reason name of one BoringSSL error, e.g. `TLSV1_ALERT_UNKNOWN_CA` out of
    /// `Error: 268436504 error:10000418:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA at file:line`.
    static func reasonName(_ error: BoringSSLInternalError) -> String? {
        let text = error.description
        guard let errorStart = text.firstRange(of: "error:") else { return nil }
        // code:library:function:REASON at file:line
        let fields = text[errorStart.upperBound...].split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4 else { return nil }
        return fields[3].split(separator: " ", maxSplits: 1).first.map(String.init)
    }
}
