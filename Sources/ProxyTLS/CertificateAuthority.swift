import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// ProxyApp's root CA: the certificate clients are asked to trust and the key that signs every
/// leaf minted for an intercepted host. A value is always a usable pair: the key belongs to the
/// certificate, the certificate may issue certificates, and the key is of a kind clients accept.
public struct CertificateAuthority: Sendable {
    /// How long a generated root is valid: about ten years.
    public static let generatedValidity: TimeInterval = 10 * 365 * 86_400
    /// How far a generated root's notBefore lies before its creation, for clients whose clocks lag.
    public static let backdating: TimeInterval = 86_400

    public let certificate: Certificate
    public let privateKey: Certificate.PrivateKey
    /// The certificate as PEM text, ending with a newline (what `ProxyCA.pem` holds).
    public let certificatePEM: String
    /// The certificate as DER bytes (what `ProxyCA.cer` holds).
    public let certificateDER: [UInt8]

    /// Checks that `privateKey` belongs to `certificate`, that the certificate is a CA that has not
    /// expired at `now`, and that the key is EC P-256, EC P-384 or RSA of 2048 bits or more.
    public init(certificate: Certificate, privateKey: Certificate.PrivateKey, now: Date = Date()) throws {
        guard privateKey.publicKey == certificate.publicKey else {
            throw CertificateAuthorityError.keyDoesNotMatchCertificate
        }
        _ = try CertificateSigningKey.signatureAlgorithm(for: certificate.publicKey)
        guard Self.mayIssueCertificates(certificate) else {
            throw CertificateAuthorityError.notACertificateAuthority(subject: certificate.subject.description)
        }
        guard certificate.notValidAfter > now else {
            throw CertificateAuthorityError.expired(
                subject: certificate.subject.description, notAfter: certificate.notValidAfter)
        }
        self.certificate = certificate
        self.privateKey = privateKey
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.certificateDER = serializer.serializedBytes
        self.certificatePEM = PEMDocument(type: "CERTIFICATE", derBytes: certificateDER).pemString + "\n"
    }

    /// A new self-signed root with a fresh P-256 key (fast to sign with, accepted everywhere, small).
    /// The default name says whose it is: "ProxyApp CA (hostname)", organisation "ProxyApp".
    public static func generate(commonName: String? = nil, now: Date = Date()) throws -> CertificateAuthority {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let name = try DistinguishedName {
            OrganizationName("ProxyApp")
            CommonName(commonName ?? "ProxyApp CA (\(MachineName.current))")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: key.publicKey)
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: RandomSerialNumber.make(),
            publicKey: key.publicKey,
            notValidBefore: now - backdating,
            notValidAfter: now + generatedValidity,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: key
        )
        return try CertificateAuthority(certificate: certificate, privateKey: key, now: now)
    }

    /// The private key as PEM text (what `ProxyCA-key.pem` holds). Keep it secret.
    public func privateKeyPEM() throws -> String {
        try privateKey.serializeAsPEM().pemString + "\n"
    }

    /// SHA-256 of the DER certificate as colon-separated upper-case hex, as browsers show it.
    public var sha256Fingerprint: String {
        Self.colonHex(SHA256.hash(data: certificateDER))
    }

    /// The serial number as colon-separated upper-case hex.
    public var serialNumberHex: String {
        Self.colonHex(certificate.serialNumber.bytes)
    }

    /// The key's kind for people: "EC P-256", "EC P-384" or "RSA 2048".
    public var keyDescription: String {
        CertificateSigningKey.describe(certificate.publicKey)
    }

    private static func colonHex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// BasicConstraints CA:TRUE and, when KeyUsage is present, keyCertSign: what verifiers require of an issuer.
    /// A malformed extension counts as absent.
    private static func mayIssueCertificates(_ certificate: Certificate) -> Bool {
        guard case .isCertificateAuthority = try? certificate.extensions.basicConstraints else { return false }
        if let usage = try? certificate.extensions.keyUsage, !usage.keyCertSign { return false }
        return true
    }
}
