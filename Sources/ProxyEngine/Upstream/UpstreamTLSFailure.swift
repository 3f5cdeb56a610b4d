import Foundation
import NIOCore
import NIOSSL
import ProxyCore
import ProxyTLS

/// A failed handshake with an origin, with the certificate problem read while the TLS handler
/// still held the certificates (nil when the failure was not about the certificate).
struct UpstreamHandshakeFailure: Error {
    let error: any Error
    let certificateProblem: UpstreamCertificateProblem?
}

/// Turns what went wrong on the TLS leg to an origin into the 502 a client is answered with,
/// naming what actually failed: the certificate check that failed (with its date, names or
/// issuer), a client certificate the origin requires, the alert the origin sent.
enum UpstreamTLSFailure {
    /// What was wrong with the origin's certificate, when `error` is about it: a name mismatch
    /// (NIOSSL's own check, after the handshake) or a failed verification (`verification` says
    /// which certificate and at which stage).
    static func certificateProblem(for error: any Error, leaf: NIOSSLCertificate?, verification: UpstreamVerificationLog?,
                                   checkedName: String, now: Date) -> UpstreamCertificateProblem? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return .nameMismatch(names: leaf.flatMap(CertificateFacts.init)?.names ?? [], checked: checkedName)
        }
        guard TLSErrorReasons.names(in: error).contains("CERTIFICATE_VERIFY_FAILED"),
              let verification, let refused = verification.refused, let facts = CertificateFacts(refused) else {
            return nil
        }
        let isLeaf = leaf.map { $0 == refused } ?? !facts.isCertificateAuthority
        return .diagnose(facts, isLeaf: isLeaf, chainBuilt: verification.passed > 0, now: now)
    }

    /// The answer for a failed handshake with `host:port`.
    static func failure(for error: any Error, host: String, port: Int) -> ProxyFailure {
        let handshake = error as? UpstreamHandshakeFailure
        if let problem = handshake?.certificateProblem {
            return .upstreamCertificateInvalid(host: host, port: port, reason: problem.reason)
        }
        let underlying = handshake?.error ?? error
        let names = TLSErrorReasons.names(in: underlying)
        if names.contains("CERTIFICATE_VERIFY_FAILED") {
            return .upstreamCertificateInvalid(
                host: host, port: port, reason: "verification failed; trust its CA with --upstream-ca FILE")
        }
        if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return .upstreamCertificateInvalid(host: host, port: port, reason: "certificate does not name the host")
        }
        return .upstreamTLSFailed(host: host, port: port, reason: protocolReason(underlying, names: names))
    }

    /// Why a handshake failed for a reason other than the certificate, in words.
    static func protocolReason(_ error: any Error, names: Set<String>) -> String {
        if names.contains("TLSV1_ALERT_CERTIFICATE_REQUIRED") { return clientCertificateRequired }
        switch error {
        case ChannelError.eof, NIOSSLError.uncleanShutdown:
            return closedDuringHandshake
        case NIOSSLError.handshakeFailed(.sslError(let stack)) where stack.contains(.eofDuringHandshake):
            return closedDuringHandshake
        case let error as IOError:
            return error.errnoCode == ECONNRESET ? "the origin reset the connection during the handshake"
                : "a socket error during the handshake (errno \(error.errnoCode))"
        default:
            break
        }
        if names.contains("WRONG_VERSION_NUMBER") { return "the origin does not speak TLS on this port" }
        if names.contains("UNSUPPORTED_PROTOCOL") { return "the origin chose a TLS version below the minimum" }
        if let alert = TLSErrorReasons.receivedAlert(in: names) {
            let hint = alert == "handshake_failure"
                ? ": it may require a client certificate, or accept none of our cipher suites" : ""
            return "the origin refused the handshake (\(alert) alert)\(hint)"
        }
        if !names.isEmpty { return "TLS error " + names.sorted().joined(separator: ", ") }
        // Never NIOSSL's own description of the error: it is no reason a user can act on.
        return "the handshake failed without a reason from the TLS library"
    }

    static let clientCertificateRequired = "origin requires a client certificate"
    static let closedDuringHandshake = "the origin closed the connection during the handshake"

    /// Failures that may mean the origin speaks only an older version or older cipher suites
    /// than we accept: worth a probe (`UpstreamTLSProbe`) to say which.
    static func suggestsLegacyOrigin(_ error: any Error) -> Bool {
        let underlying = (error as? UpstreamHandshakeFailure)?.error ?? error
        return !TLSErrorReasons.names(in: underlying).isDisjoint(with: [
            "TLSV1_ALERT_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL", "SSLV3_ALERT_HANDSHAKE_FAILURE",
            "TLSV1_ALERT_INSUFFICIENT_SECURITY", "WRONG_CIPHER_RETURNED",
        ])
    }

    /// The answer once a probe found the origin completing a handshake at `originVersion` with
    /// legacy settings: its version is below `minimum`, or else its cipher suites were the problem.
    static func legacyOrigin(speaking originVersion: TLSProtocolVersion, minimum: TLSProtocolVersion,
                             host: String, port: Int) -> ProxyFailure {
        let reason = originVersion < minimum
            ? TLSVersionRefusal.upstreamReason(originVersion: originVersion)
            : TLSVersionRefusal.upstreamLegacyCiphersReason
        return .upstreamTLSFailed(host: host, port: port, reason: reason)
    }
}
