import Crypto
import Foundation
import SwiftASN1
import X509
import XCTest
import _CryptoExtras
@testable import ProxyTLS

/// The root CA: its shape (what clients and verifiers require of an issuer), its validity, and
/// which certificate/key pairs are refused.
final class CertificateAuthorityTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// A generated root is a P-256 CA that may sign leaves but no intermediates, names ProxyApp,
    /// and is self-signed.
    func testGeneratedRootIsAConstrainedAuthority() throws {
        let authority = try CertificateAuthority.generate(now: now)
        let certificate = authority.certificate
        let extensions = certificate.extensions

        XCTAssertEqual(try extensions.basicConstraints, .isCertificateAuthority(maxPathLength: 0))
        XCTAssertEqual(extensions[oid: .X509ExtensionID.basicConstraints]?.critical, true)
        let usage = try XCTUnwrap(try extensions.keyUsage)
        XCTAssertTrue(usage.keyCertSign)
        XCTAssertTrue(usage.cRLSign)
        XCTAssertFalse(usage.digitalSignature)
        XCTAssertEqual(extensions[oid: .X509ExtensionID.keyUsage]?.critical, true)
        XCTAssertEqual(try extensions.subjectKeyIdentifier, SubjectKeyIdentifier(hash: certificate.publicKey))

        XCTAssertEqual(certificate.issuer, certificate.subject)
        XCTAssertTrue(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        XCTAssertEqual(certificate.signatureAlgorithm, .ecdsaWithSHA256)
        XCTAssertEqual(authority.keyDescription, "EC P-256")
        let subject = certificate.subject.description
        XCTAssertTrue(subject.contains("CN=ProxyApp CA (\(MachineName.current))"), subject)
        XCTAssertTrue(subject.contains("O=ProxyApp"), subject)
    }

    /// Valid from a day before creation, for about ten years.
    func testGeneratedRootValidity() throws {
        let certificate = try CertificateAuthority.generate(now: now).certificate
        XCTAssertEqual(certificate.notValidBefore, now - 86_400)
        XCTAssertEqual(certificate.notValidAfter, now + 10 * 365 * 86_400)
    }

    /// Each root gets its own random serial (at most 20 octets, positive) and its own key.
    func testGeneratedRootsDiffer() throws {
        let first = try CertificateAuthority.generate(commonName: "Test CA", now: now)
        let second = try CertificateAuthority.generate(commonName: "Test CA", now: now)
        XCTAssertNotEqual(first.certificate.serialNumber, second.certificate.serialNumber)
        XCTAssertNotEqual(first.certificate.publicKey, second.certificate.publicKey)
        for serial in [first.certificate.serialNumber, second.certificate.serialNumber] {
            XCTAssertLessThanOrEqual(serial.bytes.count, 20)
            XCTAssertLessThan(try XCTUnwrap(serial.bytes.first), 0x80)
        }
        XCTAssertEqual(first.certificate.subject.description, "CN=Test CA,O=ProxyApp")
    }

    /// The PEM and DER forms hold the same certificate, and the key survives its PEM form.
    func testEncodingsRoundTrip() throws {
        let authority = try CertificateAuthority.generate(now: now)
        XCTAssertTrue(authority.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        XCTAssertTrue(authority.certificatePEM.hasSuffix("-----END CERTIFICATE-----\n"))
        XCTAssertEqual(try Certificate(pemEncoded: authority.certificatePEM), authority.certificate)
        XCTAssertEqual(try Certificate(derEncoded: authority.certificateDER), authority.certificate)
        XCTAssertEqual(try Certificate.PrivateKey(pemEncoded: try authority.privateKeyPEM()), authority.privateKey)
    }

    /// The fingerprint is SHA-256 over the DER, as 32 colon-separated upper-case hex bytes.
    func testFingerprint() throws {
        let authority = try CertificateAuthority.generate(now: now)
        let expected = SHA256.hash(data: authority.certificateDER).map { String(format: "%02X", $0) }.joined(separator: ":")
        XCTAssertEqual(authority.sha256Fingerprint, expected)
        XCTAssertEqual(authority.sha256Fingerprint.count, 32 * 3 - 1)
    }

    func testKeyOfAnotherCertificateIsRefused() throws {
        let authority = try CertificateAuthority.generate(now: now)
        let other = try CertificateAuthority.generate(now: now)
        XCTAssertThrowsError(try CertificateAuthority(certificate: authority.certificate, privateKey: other.privateKey, now: now)) {
            XCTAssertEqual($0 as? CertificateAuthorityError, .keyDoesNotMatchCertificate)
        }
    }

    func testCertificateThatIsNotAnAuthorityIsRefused() throws {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let server = try ForeignAuthorities.selfSigned(key, name: "Just a server", isAuthority: false)
        XCTAssertThrowsError(try CertificateAuthority(certificate: server, privateKey: key)) {
            XCTAssertEqual($0 as? CertificateAuthorityError, .notACertificateAuthority(subject: "CN=Just a server"))
        }
    }

    /// Keys browsers refuse for a TLS CA are refused here, not discovered at the first handshake.
    func testUnsupportedKeyTypesAreRefused() throws {
        let p521 = Certificate.PrivateKey(P521.Signing.PrivateKey())
        let certificate = try ForeignAuthorities.selfSigned(p521, name: "P-521 CA", isAuthority: true)
        XCTAssertThrowsError(try CertificateAuthority(certificate: certificate, privateKey: p521)) {
            XCTAssertEqual($0 as? CertificateAuthorityError, .unsupportedKeyType("EC P-521"))
            XCTAssertTrue("\($0)".contains("use an EC P-256, EC P-384 or RSA"), "\($0)")
        }
    }

    func testExpiredAuthorityIsRefused() throws {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let notAfter = now - 86_400
        let certificate = try ForeignAuthorities.selfSigned(
            key, name: "Old CA", isAuthority: true, notBefore: now - 400 * 86_400, notAfter: notAfter)
        XCTAssertThrowsError(try CertificateAuthority(certificate: certificate, privateKey: key, now: now)) {
            XCTAssertEqual($0 as? CertificateAuthorityError, .expired(subject: "CN=Old CA", notAfter: notAfter))
        }
    }

    /// An RSA root (as mitmproxy and Charles make them) is accepted and described by its size.
    func testRSAAuthorityIsAccepted() throws {
        let exported = ForeignAuthorities.rsa
        let key = try Certificate.PrivateKey(pemEncoded: exported.privateKeyPEM)
        let authority = try CertificateAuthority(certificate: exported.certificate, privateKey: key)
        XCTAssertEqual(authority.keyDescription, "RSA 2048")
    }
}
