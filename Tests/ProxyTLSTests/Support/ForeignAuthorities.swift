import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// Certificates and keys as other tools export them (mitmproxy, Charles, openssl), made in the
/// test rather than checked in, so none of them ever expires.
enum ForeignAuthorities {
    /// A certificate and its key, both as PEM text.
    struct Exported {
        let certificate: Certificate
        let certificatePEM: String
        let privateKeyPEM: String
    }

    /// An RSA-2048 root, the kind mitmproxy and Charles create. Made once: RSA keys take a while.
    static let rsa: Exported = {
        do {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let certificate = try selfSigned(Certificate.PrivateKey(key), name: "Imported RSA CA", isAuthority: true)
            return Exported(certificate: certificate, certificatePEM: try pem(certificate), privateKeyPEM: key.pemRepresentation)
        } catch {
            fatalError("cannot make the RSA test CA: \(error)")
        }
    }()

    /// A P-384 root whose key is SEC1 (`EC PRIVATE KEY`) after an `EC PARAMETERS` block, as
    /// `openssl ecparam -genkey` writes it.
    static func p384WithSEC1Key() throws -> Exported {
        let key = P384.Signing.PrivateKey()
        let certificate = try selfSigned(Certificate.PrivateKey(key), name: "Imported P-384 CA", isAuthority: true)
        var parameters = DER.Serializer()
        try parameters.serialize(ASN1ObjectIdentifier.NamedCurves.secp384r1)
        var sec1 = DER.Serializer()
        try sec1.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(1)
            try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(key.rawRepresentation)))
            try coder.serialize(ASN1ObjectIdentifier.NamedCurves.secp384r1, explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
            try coder.serialize(ASN1BitString(bytes: ArraySlice(key.publicKey.x963Representation)),
                                explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
        }
        let keyPEM = PEMDocument(type: "EC PARAMETERS", derBytes: parameters.serializedBytes).pemString + "\n"
            + PEMDocument(type: "EC PRIVATE KEY", derBytes: sec1.serializedBytes).pemString + "\n"
        return Exported(certificate: certificate, certificatePEM: try pem(certificate), privateKeyPEM: keyPEM)
    }

    /// A self-signed P-256 certificate that is not a CA (BasicConstraints CA:FALSE), with its key.
    static func notAnAuthority() throws -> Exported {
        let key = P256.Signing.PrivateKey()
        let certificate = try selfSigned(Certificate.PrivateKey(key), name: "Just a server", isAuthority: false)
        return Exported(certificate: certificate, certificatePEM: try pem(certificate), privateKeyPEM: key.pemRepresentation)
    }

    /// A self-signed certificate for `key`; `isAuthority` sets BasicConstraints CA:TRUE and keyCertSign.
    static func selfSigned(_ key: Certificate.PrivateKey, name: String, isAuthority: Bool,
                           notBefore: Date = Date() - 86_400, notAfter: Date = Date() + 365 * 86_400) throws -> Certificate {
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            Critical(isAuthority ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority)
            Critical(isAuthority ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true))
            SubjectKeyIdentifier(hash: key.publicKey)
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: subject, subject: subject,
            extensions: extensions, issuerPrivateKey: key)
    }

    static func pem(_ certificate: Certificate) throws -> String {
        try certificate.serializeAsPEM().pemString + "\n"
    }
}
