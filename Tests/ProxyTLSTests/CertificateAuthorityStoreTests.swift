import Foundation
import TestSupport
import X509
import XCTest
@testable import ProxyTLS

/// The CA on disk: created once with private modes, reused, replaced only when asked, and every
/// damaged or foreign file reported with its name and the fix.
final class CertificateAuthorityStoreTests: XCTestCase {
    private var temporary: TemporaryDirectory!
    private var store: CertificateAuthorityStore!

    override func setUpWithError() throws {
        temporary = try TemporaryDirectory("proxytls")
        store = CertificateAuthorityStore(directory: temporary.url.appendingPathComponent("data/ca"))
    }

    override func tearDown() {
        temporary.remove()
    }

    func testPathsAreInTheDirectory() {
        let directory = store.directory.path
        XCTAssertEqual(store.certificatePEMPath, directory + "/ProxyCA.pem")
        XCTAssertEqual(store.certificateDERPath, directory + "/ProxyCA.cer")
        XCTAssertEqual(store.privateKeyPath, directory + "/ProxyCA-key.pem")
    }

    /// The first load creates the directory (0700), the key (0600) and both certificate forms.
    func testFirstLoadCreatesTheFiles() throws {
        XCTAssertNil(try store.load())
        let (authority, created) = try store.loadOrCreateReportingCreation()
        XCTAssertTrue(created)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.directory.path), 0o700)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.privateKeyPath), 0o600)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.certificatePEMPath), 0o644)
        XCTAssertEqual(try String(contentsOfFile: store.certificatePEMPath, encoding: .utf8), authority.certificatePEM)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: store.certificateDERPath))), authority.certificateDER)
        let storedKey = try Certificate.PrivateKey(pemEncoded: String(contentsOfFile: store.privateKeyPath, encoding: .utf8))
        XCTAssertEqual(storedKey, authority.privateKey)
    }

    /// Later loads, by other store values too, return the stored CA unchanged.
    func testLaterLoadsReuseTheStoredAuthority() throws {
        let first = try store.loadOrCreate()
        let again = try CertificateAuthorityStore(directory: store.directory).loadOrCreateReportingCreation()
        XCTAssertFalse(again.created)
        XCTAssertEqual(again.authority.certificateDER, first.certificateDER)
        XCTAssertEqual(again.authority.privateKey, first.privateKey)
        XCTAssertEqual(try store.load()?.certificateDER, first.certificateDER)
    }

    func testRegenerateReplacesTheAuthority() throws {
        let first = try store.loadOrCreate()
        let second = try store.regenerate()
        XCTAssertNotEqual(second.certificateDER, first.certificateDER)
        XCTAssertEqual(try store.loadOrCreate().certificateDER, second.certificateDER)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: store.certificateDERPath))), second.certificateDER)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.privateKeyPath), 0o600)
    }

    /// Only the three files remain: no temporary files from atomic writes are left behind.
    func testWritesLeaveNoTemporaryFiles() throws {
        _ = try store.loadOrCreate()
        _ = try store.regenerate()
        let names = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).sorted()
        XCTAssertEqual(names, [".lock", "ProxyCA-key.pem", "ProxyCA.cer", "ProxyCA.pem"])
    }

    /// A damaged certificate is reported with its path and the fix, and left as it was.
    func testDamagedCertificateIsReportedNotReplaced() throws {
        _ = try store.loadOrCreate()
        try "not a certificate\n".write(toFile: store.certificatePEMPath, atomically: true, encoding: .utf8)
        assertLoadFails(mentioning: store.certificatePEMPath)
        XCTAssertEqual(try String(contentsOfFile: store.certificatePEMPath, encoding: .utf8), "not a certificate\n")
    }

    func testDamagedKeyIsReported() throws {
        _ = try store.loadOrCreate()
        try "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
            .write(toFile: store.privateKeyPath, atomically: true, encoding: .utf8)
        assertLoadFails(mentioning: store.privateKeyPath)
    }

    /// A key from another CA next to the certificate names both files.
    func testMismatchedKeyIsReported() throws {
        _ = try store.loadOrCreate()
        let foreign = try CertificateAuthority.generate()
        try foreign.privateKeyPEM().write(toFile: store.privateKeyPath, atomically: true, encoding: .utf8)
        let error = assertLoadFails(mentioning: store.privateKeyPath)
        XCTAssertTrue("\(error)".contains(store.certificatePEMPath), "\(error)")
        XCTAssertTrue("\(error)".contains("does not belong to the certificate"), "\(error)")
    }

    func testMissingKeyIsReported() throws {
        _ = try store.loadOrCreate()
        try FileManager.default.removeItem(atPath: store.privateKeyPath)
        let error = assertLoadFails(mentioning: store.privateKeyPath)
        XCTAssertEqual(error as? CertificateAuthorityError,
                       .storedFileMissing(path: store.privateKeyPath, companion: store.certificatePEMPath))
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.privateKeyPath))
    }

    /// `ProxyCA.cer` is only a copy of the PEM: a missing one is written again.
    /// A key left readable by others (a copy made under a loose umask, an older version) is made
    /// 0600 again when the CA is loaded: before, a 0644 key stayed 0644 while the directory
    /// around it was tightened.
    func testLoadingMakesALooseKeyPrivateAgain() throws {
        _ = try store.loadOrCreate()
        XCTAssertEqual(chmod(store.privateKeyPath, 0o644), 0)
        XCTAssertEqual(chmod(store.directory.path, 0o755), 0)
        _ = try CertificateAuthorityStore(directory: store.directory).loadOrCreate()
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.privateKeyPath), 0o600)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.directory.path), 0o700)
        XCTAssertEqual(try TemporaryDirectory.mode(of: store.certificatePEMPath), 0o644, "the certificate is public")
    }

    func testMissingDERCopyIsRestored() throws {
        let authority = try store.loadOrCreate()
        try FileManager.default.removeItem(atPath: store.certificateDERPath)
        XCTAssertEqual(try store.loadOrCreate().certificateDER, authority.certificateDER)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: store.certificateDERPath))), authority.certificateDER)
    }

    func testUnwritableDirectoryIsReported() throws {
        try FileManager.default.createDirectory(at: temporary.url.appendingPathComponent("data"), withIntermediateDirectories: true)
        try "a file where the directory should be".write(
            to: store.directory, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try store.loadOrCreate()) { error in
            guard case .fileSystem(let path, _)? = error as? CertificateAuthorityError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(path, self.store.directory.path)
            XCTAssertTrue("\(error)".contains("--data-dir"), "\(error)")
        }
    }

    @discardableResult
    private func assertLoadFails(mentioning path: String, file: StaticString = #filePath, line: UInt = #line) -> any Error {
        var caught: (any Error)?
        XCTAssertThrowsError(try store.loadOrCreate(), file: file, line: line) { caught = $0 }
        let message = caught.map { "\($0)" } ?? ""
        XCTAssertTrue(message.contains(path), message, file: file, line: line)
        XCTAssertTrue(message.contains("proxyapp ca regenerate"), message, file: file, line: line)
        return caught ?? CertificateAuthorityError.noCertificate
    }
}
