import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// Signs a server certificate for any host with the root CA, as an intercepted client expects
/// to see it. One P-256 key pair per minter (per run) serves every leaf, as mitmproxy does: a
/// fresh key would cost ≈ 200 µs more per host than the ≈ 43 µs signature, and a leaf key only
/// protects the connection between the client and this proxy. Everything that is the same for
/// every leaf (keys, extensions, NIOSSL forms of the key and root) is prepared once in `init`.
public final class LeafCertificateMinter: Sendable {
    /// How far notBefore lies before the mint, for clients whose clocks lag.
    public static let backdating: TimeInterval = 86_400
    /// notAfter − notBefore: under the 200 days Chromium accepts (mitmproxy uses 199 too).
    public static let maximumValidity: TimeInterval = 199 * 86_400

    public let authority: CertificateAuthority
    private let leafKey: Certificate.PrivateKey
    private let leafKeyForNIOSSL: NIOSSLPrivateKey
    private let rootForNIOSSL: NIOSSLCertificate
    private let signatureAlgorithm: Certificate.SignatureAlgorithm
    /// BasicConstraints, KeyUsage, EKU, SKI and AKI: the same in every leaf.
    private let sharedExtensions: [Certificate.Extension]

    public init(authority: CertificateAuthority) throws {
        let key = P256.Signing.PrivateKey()
        self.authority = authority
        self.leafKey = Certificate.PrivateKey(key)
        self.leafKeyForNIOSSL = try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
        self.rootForNIOSSL = try NIOSSLCertificate(bytes: authority.certificateDER, format: .der)
        self.signatureAlgorithm = try CertificateSigningKey.signatureAlgorithm(for: authority.certificate.publicKey)
        var extensions = [
            try Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true),
            // The leaf key is EC: digitalSignature only (RFC 5480 §3 excludes keyEncipherment for EC keys).
            try Certificate.Extension(KeyUsage(digitalSignature: true), critical: true),
            try Certificate.Extension(try ExtendedKeyUsage([.serverAuth]), critical: false),
            try Certificate.Extension(SubjectKeyIdentifier(hash: leafKey.publicKey), critical: false),
        ]
        // The AKI must equal the root's SKI, or OpenSSL refuses the chain; a root without an SKI gets no AKI.
        if let rootKeyIdentifier = try? authority.certificate.extensions.subjectKeyIdentifier {
            extensions.append(try Certificate.Extension(
                AuthorityKeyIdentifier(keyIdentifier: rootKeyIdentifier.keyIdentifier), critical: false))
        }
        self.sharedExtensions = extensions
    }

    /// A leaf for `host` (DNS name or IP literal, IPv6 maybe bracketed) with its chain and key in
    /// NIOSSL's types, ready for a TLS server context.
    public func mint(host: String, now: Date = Date()) throws -> MintedLeaf {
        let certificate = try makeCertificate(host: host, now: now)
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let leafDER = serializer.serializedBytes
        return MintedLeaf(
            certificateChain: [try NIOSSLCertificate(bytes: leafDER, format: .der), rootForNIOSSL],
            privateKey: leafKeyForNIOSSL,
            leafDER: leafDER,
            notAfter: certificate.notValidAfter
        )
    }

    /// The signed leaf alone, before any conversion (what `mint` spends most of its time on).
    /// Subject CN = host (left out above 64 characters, the X.520 limit; the SAN is then critical
    /// as RFC 5280 requires for an empty subject). Never valid beyond the root.
    public func makeCertificate(host: String, now: Date = Date()) throws -> Certificate {
        let leafHost = try LeafHost(parsing: host)
        let notBefore = now - Self.backdating
        let notAfter = min(notBefore + Self.maximumValidity, authority.certificate.notValidAfter)
        guard notAfter > now else { throw LeafMintingError.authorityExpired(notAfter: authority.certificate.notValidAfter) }
        let hasCommonName = leafHost.name.utf8.count <= 64
        let subject = hasCommonName ? try DistinguishedName { CommonName(leafHost.name) } : DistinguishedName()
        let alternativeNames = try Certificate.Extension(
            SubjectAlternativeNames([leafHost.subjectAlternativeName]), critical: !hasCommonName)
        return try Certificate(
            version: .v3,
            serialNumber: RandomSerialNumber.make(),
            publicKey: leafKey.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: authority.certificate.subject,
            subject: subject,
            signatureAlgorithm: signatureAlgorithm,
            extensions: try Certificate.Extensions(sharedExtensions + [alternativeNames]),
            issuerPrivateKey: authority.privateKey
        )
    }
}
