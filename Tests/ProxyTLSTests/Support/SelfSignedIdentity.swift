import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A self-signed P-256 certificate for `localhost` and 127.0.0.1 with its key, made fresh for a
/// test: no client trusts it unless told to, which is exactly what the rejection tests need.
struct SelfSignedIdentity {
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey
    let pem: String

    init(commonName: String = "localhost") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                // keyCertSign: a client told to trust this certificate checks it as its own issuer.
                KeyUsage(digitalSignature: true, keyCertSign: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.certificate = try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
        self.privateKey = try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
        self.pem = try certificate.serializeAsPEM().pemString
    }

    /// Writes the certificate (never the key) as PEM into `directory`.
    func writeCertificate(to directory: URL, name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try pem.write(to: url, atomically: true, encoding: .utf8)
        return url
    }
}
