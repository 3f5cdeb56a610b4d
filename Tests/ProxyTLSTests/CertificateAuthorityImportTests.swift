import Foundation
import TestSupport
import X509
import XCTest
import _CryptoExtras
@testable import ProxyTLS

/// Importing a CA made by another tool: the PEM shapes mitmproxy, Charles and openssl write, and
/// a clear error for each pair that cannot work. A refused import leaves the stored CA alone.
final class CertificateAuthorityImportTests: XCTestCase {
    private var temporary: TemporaryDirectory!
    private var store: CertificateAuthorityStore!

    override func setUpWithError() throws {
        temporary = try TemporaryDirectory("proxytls")
        store = CertificateAuthorityStore(directory: temporary.url.appendingPathComponent("ca"))
    }

    override func tearDown() {
        temporary.remove()
    }

    /// Separate files, RSA key in PKCS#1 (`RSA PRIVATE KEY`): stored, and loaded back as the same CA.
    func testImportOfSeparateRSAFiles() throws {
        let exported = ForeignAuthorities.rsa
        let imported = try store.importAuthority(certificatePEM: exported.certificatePEM, privateKeyPEM: exported.privateKeyPEM)
        XCTAssertEqual(imported.certificate, exported.certificate)
        XCTAssertEqual(imported.keyDescription, "RSA 2048")
        let loaded = try CertificateAuthorityStore(directory: store.directory).loadOrCreateReportingCreation()
        XCTAssertFalse(loaded.created)
        XCTAssertEqual(loaded.authority.certificateDER, imported.certificateDER)
        XCTAssertEqual(loaded.authority.privateKey, imported.privateKey)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.privateKeyPath), 0o600)
    }

    /// mitmproxy's `mitmproxy-ca.pem`: PKCS#8 key then certificate in one file, given as both
    /// arguments or with an empty key.
    func testImportOfOneFileHoldingKeyAndCertificate() throws {
        let exported = ForeignAuthorities.rsa
        let pkcs8 = try _RSA.Signing.PrivateKey(pemRepresentation: exported.privateKeyPEM).pkcs8PEMRepresentation
        let combined = pkcs8 + "\n" + exported.certificatePEM
        XCTAssertTrue(combined.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertEqual(try store.importAuthority(certificatePEM: combined, privateKeyPEM: combined).certificate, exported.certificate)
        XCTAssertEqual(try store.importAuthority(certificatePEM: combined, privateKeyPEM: "").certificate, exported.certificate)
    }

    /// A P-384 key in SEC1 after an `EC PARAMETERS` block, as `openssl ecparam -genkey` writes it.
    func testImportOfP384KeyInSEC1Form() throws {
        let exported = try ForeignAuthorities.p384WithSEC1Key()
        let imported = try store.importAuthority(certificatePEM: exported.certificatePEM, privateKeyPEM: exported.privateKeyPEM)
        XCTAssertEqual(imported.certificate, exported.certificate)
        XCTAssertEqual(imported.keyDescription, "EC P-384")
    }

    func testKeyOfAnotherCertificateIsRefused() throws {
        let other = try CertificateAuthority.generate()
        assertImportFails(ForeignAuthorities.rsa.certificatePEM, try other.privateKeyPEM(), with: .keyDoesNotMatchCertificate)
    }

    func testCertificateThatIsNotAnAuthorityIsRefused() throws {
        let server = try ForeignAuthorities.notAnAuthority()
        assertImportFails(server.certificatePEM, server.privateKeyPEM,
                          with: .notACertificateAuthority(subject: "CN=Just a server"))
    }

    func testGarbageIsRefused() throws {
        let exported = ForeignAuthorities.rsa
        assertImportFails("hello", exported.privateKeyPEM, with: .noCertificate)
        assertImportFails(exported.certificatePEM, "", with: .noPrivateKey)
        assertImportFails(exported.certificatePEM, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") {
            guard case .unreadablePrivateKey = $0 else { return XCTFail("unexpected \($0)") }
        }
        assertImportFails("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", exported.privateKeyPEM) {
            guard case .invalidPEM = $0 else { return XCTFail("unexpected \($0)") }
        }
    }

    func testEncryptedKeysAreRefusedWithTheFix() throws {
        let certificate = ForeignAuthorities.rsa.certificatePEM
        let pkcs8 = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n"
        let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMAA=\n-----END RSA PRIVATE KEY-----\n"
        for key in [pkcs8, legacy] {
            assertImportFails(certificate, key, with: .encryptedPrivateKey)
        }
        XCTAssertTrue("\(CertificateAuthorityError.encryptedPrivateKey)".contains("openssl pkey"))
    }

    func testTwoDifferentKeysAreRefused() throws {
        let first = try CertificateAuthority.generate()
        let second = try CertificateAuthority.generate()
        assertImportFails(first.certificatePEM, try first.privateKeyPEM() + second.privateKeyPEM(), with: .multiplePrivateKeys)
    }

    /// A failed import leaves the stored CA as it was.
    func testRefusedImportKeepsTheStoredAuthority() throws {
        let original = try store.loadOrCreate()
        let server = try ForeignAuthorities.notAnAuthority()
        XCTAssertThrowsError(try store.importAuthority(certificatePEM: server.certificatePEM, privateKeyPEM: server.privateKeyPEM))
        XCTAssertEqual(try store.loadOrCreate().certificateDER, original.certificateDER)
    }

    private func assertImportFails(_ certificatePEM: String, _ privateKeyPEM: String, with expected: CertificateAuthorityError,
                                   file: StaticString = #filePath, line: UInt = #line) {
        assertImportFails(certificatePEM, privateKeyPEM, file: file, line: line) {
            XCTAssertEqual($0, expected, file: file, line: line)
        }
    }

    private func assertImportFails(_ certificatePEM: String, _ privateKeyPEM: String,
                                   file: StaticString = #filePath, line: UInt = #line,
                                   _ check: (CertificateAuthorityError) -> Void) {
        XCTAssertThrowsError(try store.importAuthority(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM),
                             file: file, line: line) { error in
            guard let error = error as? CertificateAuthorityError else {
                return XCTFail("not a CertificateAuthorityError: \(error)", file: file, line: line)
            }
            check(error)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.privateKeyPath), file: file, line: line)
    }
}
