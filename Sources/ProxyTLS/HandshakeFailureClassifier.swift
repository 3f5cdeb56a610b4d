import NIOCore
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells, from the error our TLS server saw and what crossed the wire (`HandshakeWireEvidence`),
/// whether a client refused the certificate we minted for it: the signal for "this client pins
/// or does not trust us, tunnel it next time".
///
/// Only a failure after the client *received* our certificate counts (see
/// `HandshakeWireEvidence` for the precise meaning): anything before says nothing about the
/// certificate, and a client could otherwise pin any host by sending junk behind its hello.
/// What rejection looks like was measured (see the tests, which provoke each case with real
/// clients): an explicit certificate alert (`unknown_ca` from BoringSSL clients, encrypted, and
/// from OpenSSL on TLS 1.2), or, from OpenSSL clients on TLS 1.3, an alert sent in clear after
/// our key change, which our side reports as `BAD_PACKET_LENGTH` /
/// `DECRYPTION_FAILED_OR_BAD_RECORD_MAC`: that counts only when the client's first record after
/// our certificate really is such an alert (junk fails the same way). Clients that just hang up
/// after our certificate (Node, many pinning libraries) give no reason at all: that is
/// `.ambiguousEOF`, for the caller to count rather than trust. Nothing that happens after the
/// handshake completed is a signal: the client accepted the certificate.
public enum HandshakeFailureClassifier {
    /// What one handshake error says about the client's view of our certificate.
    public enum Classification: Sendable, Equatable {
        /// The client refused the handshake after receiving our certificate. `reason` is one
        /// line for people; `evidence` what crossed the wire and the error as NIOSSL reported it.
        case rejected(reason: String, evidence: String)
        /// The connection ended after our certificate went out, before the handshake completed,
        /// without a reason: a pinning client, or just a client that went away.
        case ambiguousEOF(evidence: String)
        /// Not about our certificate (before the client could have received it, after the
        /// handshake, not TLS, a protocol mismatch…).
        case notAPinSignal
    }

    /// Alerts a client sends when it does not accept the server certificate (RFC 8446 §6.2):
    /// BoringSSL's reason name, the alert's name and its description code. `access_denied` is
    /// left out: it is about authorization, which a client does not apply to a server certificate.
    static let certificateAlerts: [(reason: String, alert: String, code: UInt8)] = [
        ("TLSV1_ALERT_UNKNOWN_CA", "unknown_ca", 48),
        ("SSLV3_ALERT_BAD_CERTIFICATE", "bad_certificate", 42),
        ("SSLV3_ALERT_CERTIFICATE_UNKNOWN", "certificate_unknown", 46),
        ("SSLV3_ALERT_UNSUPPORTED_CERTIFICATE", "unsupported_certificate", 43),
        ("SSLV3_ALERT_CERTIFICATE_EXPIRED", "certificate_expired", 45),
        ("SSLV3_ALERT_CERTIFICATE_REVOKED", "certificate_revoked", 44),
    ]

    /// Record-layer errors our server reports when a TLS 1.3 client's alert arrives unencrypted
    /// after we switched to handshake keys: the way OpenSSL clients refuse our certificate.
    static let cleartextAlertReasons: Set<String> = ["BAD_PACKET_LENGTH", "DECRYPTION_FAILED_OR_BAD_RECORD_MAC"]

    /// The name of a certificate alert's description code (`unknown_ca` for 48); nil for others.
    static func alertName(_ code: UInt8) -> String? {
        certificateAlerts.first { $0.code == code }?.alert
    }

    /// The certificate alert a `.rejected` reason of `classify` names (`unknown_ca` out of
    /// "client sent unknown_ca after our certificate (TLS 1.3)"), for the pin's evidence.
    public static func certificateAlert(in reason: String) -> String? {
        certificateAlerts.first { reason.hasPrefix("client sent \($0.alert) ") }?.alert
    }

    /// What an error says on its own, before the wire is consulted.
    private enum ErrorSignal {
        /// A certificate alert NIOSSL read (and decrypted, on TLS 1.3).
        case certificateAlert(String)
        /// A record we could not decrypt: maybe an unencrypted alert, maybe junk.
        case undecryptableRecord
        /// The connection ended (EOF, reset) without a reason.
        case endOfInput
        case other
    }

    private static func signal(of error: (any Error)?) -> ErrorSignal {
        switch error {
        case nil:
            return .endOfInput
        case NIOSSLError.handshakeFailed(.sslError(let stack))?:
            let reasons = Set(stack.compactMap(reasonName))
            if let match = certificateAlerts.first(where: { reasons.contains($0.reason) }) {
                return .certificateAlert(match.alert)
            }
            if !reasons.isDisjoint(with: cleartextAlertReasons) { return .undecryptableRecord }
            return stack.contains(.eofDuringHandshake) ? .endOfInput : .other
        case NIOSSLError.uncleanShutdown?:
            return .endOfInput
        case let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode):  // a reset, read or written
            return .endOfInput
        default:
            return .other
        }
    }

    /// Classifies a failed (or abandoned) handshake. `error` is what our TLS server caught, nil
    /// when the connection just closed; `handshakeCompleted` whether the handshake had completed
    /// before; `wire` what crossed the wire until then.
    public static func classify(_ error: (any Error)?, handshakeCompleted: Bool,
                                wire: HandshakeWireEvidence) -> Classification {
        guard !handshakeCompleted, let version = wire.certificateSent?.rawValue else { return .notAPinSignal }
        let evidence = wire.summary + (error.map { "; \($0)" } ?? "")
        switch signal(of: error) {
        case .certificateAlert(let alert):
            guard wire.clientRecordCountAfterCertificate > 0 else { return .notAPinSignal }
            return .rejected(reason: "client sent \(alert) after our certificate (\(version))", evidence: evidence)
        case .undecryptableRecord:
            guard case .alert(level: 2, let code)? = wire.firstClientRecordAfterCertificate, let alert = alertName(code)
            else { return .notAPinSignal }
            return .rejected(reason: "client sent \(alert) after our certificate (\(version))", evidence: evidence)
        case .endOfInput:
            guard !wire.clientEndedBeforeCertificate else { return .notAPinSignal }
            return .ambiguousEOF(evidence: evidence)
        case .other:
            return .notAPinSignal
        }
    }

    /// `error` in a few words for a flow (`ClientHandshakeFailureText`), with BoringSSL's reason
    /// names in parentheses instead of its full stack with file paths.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case NIOSSLError.handshakeFailed(.sslError(let stack)) where !stack.isEmpty:
            return ClientHandshakeFailureText.text(for: stack.map { reasonName($0) ?? "unnamed error" })
        case NIOSSLError.uncleanShutdown:
            return "the client closed the connection during the TLS handshake"
        case let error as IOError:
            return "the connection failed during the TLS handshake: \(String(cString: strerror(error.errnoCode)))"
        default:
            return "a TLS error (\(String(describing: error)))"
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
