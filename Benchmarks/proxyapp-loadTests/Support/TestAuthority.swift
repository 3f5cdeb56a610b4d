import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throwaway CA and one server certificate it issued for `localhost` and 127.0.0.1, so the
/// load generator's TLS is tested with the verification it does in the bench (a CA file, the
/// name or address checked), and a second, unrelated CA to see it refuse.
struct TestAuthority {
    let caPEM: String
    let serverChain: [NIOSSLCertificate]
    let serverKey: NIOSSLPrivateKey

    init() throws {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("proxyapp-load test CA") }
        let serverKey = P256.Signing.PrivateKey()
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(caKey))
        var serializer = DER.Serializer()
        try serializer.serialize(server)
        serverChain = [try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)]
        self.serverKey = try NIOSSLPrivateKey(bytes: Array(serverKey.derRepresentation), format: .der)
        caPEM = try ca.serializeAsPEM().pemString
    }

    /// Writes the CA certificate into a fresh temporary file and returns its path.
    func writeCA() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-load-ca-\(UUID()).pem")
        try caPEM.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// A server context offering `protocols` in ALPN.
    func serverContext(protocols: [String] = ["http/1.1"]) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: serverChain.map { .certificate($0) }, privateKey: .privateKey(serverKey))
        configuration.applicationProtocols = protocols
        return try NIOSSLContext(configuration: configuration)
    }
}
