import Foundation

/// The parts of an origin's certificate that say why it failed verification, read by ProxyTLS
/// from the certificate BoringSSL refused (or from the origin's leaf for a name mismatch).
public struct CertificateFacts: Sendable, Hashable {
    /// The subject as RFC 4514 text, e.g. `CN=example.com`.
    public var subject: String
    public var issuer: String
    public var notBefore: Date
    public var notAfter: Date
    /// The subjectAltName DNS names and IP addresses, as text, in certificate order.
    public var names: [String]
    /// Subject and issuer are the same name: a root or a self-signed leaf.
    public var isSelfIssued: Bool
    /// The extended key usage allows TLS servers (true when the extension is absent).
    public var allowsServerAuth: Bool
    /// Basic constraints say it is a CA.
    public var isCertificateAuthority: Bool

    public init(subject: String, issuer: String, notBefore: Date, notAfter: Date, names: [String] = [],
                isSelfIssued: Bool = false, allowsServerAuth: Bool = true, isCertificateAuthority: Bool = false) {
        self.subject = subject
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.names = names
        self.isSelfIssued = isSelfIssued
        self.allowsServerAuth = allowsServerAuth
        self.isCertificateAuthority = isCertificateAuthority
    }
}

/// Why the proxy did not trust an origin's certificate, in words a user can act on.
///
/// It exists because BoringSSL reports every verification failure as one
/// `CERTIFICATE_VERIFY_FAILED`: the engine observes which certificate failed and whether the
/// chain to a trusted root had been built by then, and this decides what that means. OpenSSL's
/// verifier works in stages (RFC 5280 §6): it first builds the chain to a trusted root (failing
/// on the topmost certificate it found: unknown issuer or self-signed), then checks the chain's
/// extensions (a leaf not for servers, a CA that is not one), and only then checks signatures
/// and validity dates from the root down, reporting each certificate that passed. So a failure
/// after some certificate passed is about the failed certificate's own dates or signature.
public enum UpstreamCertificateProblem: Sendable, Equatable {
    case expired(subject: String, on: Date)
    case notYetValid(subject: String, from: Date)
    case selfSigned(subject: String)
    /// A self-signed certificate (the leaf, or a root sent along) whose dates fail: untrusted,
    /// or trusted with `--upstream-ca` and out of date. BoringSSL reports both the same way, and
    /// saying only "self-signed; trust it with --upstream-ca" misled when it was trusted.
    case selfSignedOutOfDate(subject: String, isLeaf: Bool, expired: Bool, date: Date)
    case unknownIssuer(issuer: String)
    case notForServers(subject: String)
    case notACertificateAuthority(subject: String)
    case badSignature(subject: String)
    /// The certificate verified but names other hosts than `checked` (the SNI sent, else the
    /// IP address connected to).
    case nameMismatch(names: [String], checked: String)

    /// Diagnoses the first certificate the verifier refused.
    /// - Parameters:
    ///   - failed: that certificate.
    ///   - isLeaf: it is the origin's own certificate, not one of its issuers.
    ///   - chainBuilt: some certificate of the chain had passed before it, so the chain up to a
    ///     trusted root had been built and checked.
    public static func diagnose(_ failed: CertificateFacts, isLeaf: Bool, chainBuilt: Bool, now: Date) -> Self {
        if chainBuilt {
            if now > failed.notAfter { return .expired(subject: failed.subject, on: failed.notAfter) }
            if now < failed.notBefore { return .notYetValid(subject: failed.subject, from: failed.notBefore) }
            return .badSignature(subject: failed.subject)
        }
        if failed.isSelfIssued {
            if now > failed.notAfter || now < failed.notBefore {
                let expired = now > failed.notAfter
                return .selfSignedOutOfDate(subject: failed.subject, isLeaf: isLeaf, expired: expired,
                                            date: expired ? failed.notAfter : failed.notBefore)
            }
            return isLeaf ? .selfSigned(subject: failed.subject) : .unknownIssuer(issuer: failed.subject)
        }
        if isLeaf && !failed.allowsServerAuth { return .notForServers(subject: failed.subject) }
        if !isLeaf && !failed.isCertificateAuthority { return .notACertificateAuthority(subject: failed.subject) }
        return .unknownIssuer(issuer: failed.issuer)
    }

    /// One line for the 502 body and the flow, after "the certificate of HOST:PORT is not trusted: ".
    /// Names and subjects come from the origin's certificate, so they are shown `printable`.
    public var reason: String {
        switch self {
        case .expired(let subject, let date):
            return "certificate expired on \(Self.text(date)) (\(Self.printable(subject)))"
        case .notYetValid(let subject, let date):
            return "certificate is not yet valid: valid from \(Self.text(date)) (\(Self.printable(subject)))"
        case .selfSigned(let subject):
            return "certificate is self-signed (\(Self.printable(subject))); trust it with --upstream-ca FILE"
        case .selfSignedOutOfDate(let subject, let isLeaf, let expired, let date):
            let dates = expired ? "expired on \(Self.text(date))" : "is not yet valid: valid from \(Self.text(date))"
            return (isLeaf ? "certificate is self-signed (\(Self.printable(subject))) and " : "the CA certificate \(Self.printable(subject)) ")
                + "\(dates): out of date, it fails even when trusted with --upstream-ca"
        case .unknownIssuer(let issuer):
            return "certificate issued by an unknown CA (\(Self.printable(issuer))); trust that CA with --upstream-ca FILE"
        case .notForServers(let subject):
            return "certificate is not for TLS servers: its extended key usage lacks serverAuth (\(Self.printable(subject)))"
        case .notACertificateAuthority(let subject):
            return "a certificate in the chain signs others but is not a CA (\(Self.printable(subject)))"
        case .badSignature(let subject):
            return "the signature of a certificate in the chain does not verify (\(Self.printable(subject)))"
        case .nameMismatch(let names, let checked):
            let listed = names.isEmpty ? "no host name" : Self.list(names.map { Self.printable($0) })
            return "certificate is for \(listed), not \(Self.printable(checked))"
        }
    }

    /// Text from a certificate made safe for a one-line message: control characters (C0, DEL,
    /// C1) and bidirectional overrides become `?`, and it is cut at 200 characters.
    static func printable(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index == 200 {
                scalars.append("…")
                break
            }
            let value = scalar.value
            let unsafe = value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F || value == 0x061C
            scalars.append(unsafe ? "?" : scalar)
        }
        return String(scalars)
    }

    /// At most five names, then how many more.
    static func list(_ names: [String]) -> String {
        let shown = names.prefix(5).joined(separator: ", ")
        return names.count > 5 ? "\(shown) and \(names.count - 5) more" : shown
    }

    /// `2024-05-01T12:00:00Z`.
    static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
