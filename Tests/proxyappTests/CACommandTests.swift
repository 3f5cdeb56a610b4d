import ArgumentParser
import Foundation
import ProxyTLS
import XCTest
@testable import proxyapp

/// `proxyapp ca …`: parsing, messages, and the commands run against a temporary data directory.
final class CACommandTests: XCTestCase {
    private var dataDirectory: URL!

    override func setUpWithError() throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-ca-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    private var store: CertificateAuthorityStore {
        CertificateAuthorityStore(directory: dataDirectory.appendingPathComponent("ca"))
    }

    /// Every subcommand parses under `ca` and takes --data-dir.
    func testSubcommandsParse() throws {
        let command = try ProxyAppCommand.parseAsRoot(["ca", "export", "--format", "der", "--out", "x.cer", "--data-dir", "/d"])
        let export = try XCTUnwrap(command as? CAExportCommand)
        XCTAssertEqual(export.format, .der)
        XCTAssertEqual(export.out, "x.cer")
        XCTAssertEqual(export.data.directory.path, "/d")
        XCTAssertTrue(try ProxyAppCommand.parseAsRoot(["ca", "path"]) is CAPathCommand)
        XCTAssertTrue(try ProxyAppCommand.parseAsRoot(["ca", "show"]) is CAShowCommand)
        XCTAssertTrue(try ProxyAppCommand.parseAsRoot(["ca", "regenerate"]) is CARegenerateCommand)
        let importCommand = try XCTUnwrap(try ProxyAppCommand.parseAsRoot(["ca", "import", "--cert", "c.pem"]) as? CAImportCommand)
        XCTAssertEqual(importCommand.cert, "c.pem")
        XCTAssertNil(importCommand.key)
        XCTAssertEqual(try CAExportCommand.parse([]).format, .pem)
    }

    func testBadArgumentsAreRefused() {
        XCTAssertThrowsError(try CAExportCommand.parse(["--format", "p12"])) { error in
            let message = CAExportCommand.message(for: error)
            XCTAssertTrue(message.contains("--format"), message)
        }
        XCTAssertThrowsError(try CAImportCommand.parse([])) { error in
            let message = CAImportCommand.message(for: error)
            XCTAssertTrue(message.contains("--cert"), message)
        }
    }

    /// DER to a terminal is refused with the fix; PEM to a terminal, or DER to a file or pipe, is fine.
    func testDERToATerminalIsRefused() throws {
        XCTAssertThrowsError(try CAExportCommand.checkDestination(format: .der, out: nil, stdoutIsTerminal: true)) {
            XCTAssertTrue("\($0)".contains("--out"), "\($0)")
        }
        XCTAssertNoThrow(try CAExportCommand.checkDestination(format: .pem, out: nil, stdoutIsTerminal: true))
        XCTAssertNoThrow(try CAExportCommand.checkDestination(format: .der, out: "ca.cer", stdoutIsTerminal: true))
        XCTAssertNoThrow(try CAExportCommand.checkDestination(format: .der, out: nil, stdoutIsTerminal: false))
    }

    /// `ca path` before any run creates the CA; `show` and `export` then use that same CA.
    func testPathShowAndExportCreateThenReuseTheAuthority() throws {
        try CAPathCommand.parse(["--data-dir", dataDirectory.path]).run()
        let authority = try XCTUnwrap(try store.load())
        XCTAssertEqual(try TemporaryFileMode.of(store.privateKeyPath), 0o600)

        try CAShowCommand.parse(["--data-dir", dataDirectory.path]).run()
        let report = CAShowCommand.report(authority, store: store)
        XCTAssertTrue(report.contains("Subject:     CN=ProxyApp CA ("), report)
        XCTAssertTrue(report.contains("SHA-256:     \(authority.sha256Fingerprint)"), report)
        XCTAssertTrue(report.contains("Key:         EC P-256"), report)
        XCTAssertTrue(report.contains(store.certificatePEMPath), report)

        let pemFile = dataDirectory.appendingPathComponent("exported.pem").path
        let derFile = dataDirectory.appendingPathComponent("exported.cer").path
        try CAExportCommand.parse(["--data-dir", dataDirectory.path, "--out", pemFile]).run()
        try CAExportCommand.parse(["--data-dir", dataDirectory.path, "--format", "der", "--out", derFile]).run()
        XCTAssertEqual(try String(contentsOfFile: pemFile, encoding: .utf8), authority.certificatePEM)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: derFile))), authority.certificateDER)
        XCTAssertEqual(try store.load()?.certificateDER, authority.certificateDER)
    }

    func testExportCreatesTheAuthorityBeforeTheFirstRun() throws {
        let out = dataDirectory.appendingPathComponent("first.pem").path
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try CAExportCommand.parse(["--data-dir", dataDirectory.path, "--out", out]).run()
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), try XCTUnwrap(try store.load()).certificatePEM)
    }

    /// `regenerate` replaces the CA and its message says clients must trust the new one.
    func testRegenerateReplacesTheAuthority() throws {
        let before = try store.loadOrCreate()
        try CARegenerateCommand.parse(["--data-dir", dataDirectory.path]).run()
        let after = try XCTUnwrap(try store.load())
        XCTAssertNotEqual(after.certificateDER, before.certificateDER)
        let message = CARegenerateCommand.report(after, store: store)
        XCTAssertTrue(message.contains("must now trust the new one"), message)
        XCTAssertTrue(message.contains(store.certificatePEMPath), message)
    }

    /// `import --cert` alone reads the key from the same file (mitmproxy's layout).
    func testImportFromOneFile() throws {
        let foreign = try CertificateAuthority.generate(commonName: "Foreign CA")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let combined = dataDirectory.appendingPathComponent("foreign-ca.pem").path
        try (try foreign.privateKeyPEM() + foreign.certificatePEM).write(toFile: combined, atomically: true, encoding: .utf8)
        try CAImportCommand.parse(["--data-dir", dataDirectory.path, "--cert", combined]).run()
        XCTAssertEqual(try store.load()?.certificateDER, foreign.certificateDER)
    }

    /// A failed import names the files and the problem, and hints at --key when it was left out.
    func testImportErrorsNameTheFiles() throws {
        let foreign = try CertificateAuthority.generate(commonName: "Foreign CA")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let certificateOnly = dataDirectory.appendingPathComponent("cert.pem").path
        try foreign.certificatePEM.write(toFile: certificateOnly, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CAImportCommand.parse(["--data-dir", dataDirectory.path, "--cert", certificateOnly]).run()) {
            let text = "\($0)"
            XCTAssertTrue(text.contains("cannot import \(certificateOnly): no private key found"), text)
            XCTAssertTrue(text.contains("Pass the key file with --key"), text)
        }
        let missing = dataDirectory.appendingPathComponent("missing.pem").path
        XCTAssertThrowsError(try CAImportCommand.parse(["--data-dir", dataDirectory.path, "--cert", missing]).run()) {
            XCTAssertTrue("\($0)".contains("cannot read --cert \(missing)"), "\($0)")
        }
        let der = dataDirectory.appendingPathComponent("cert.cer").path
        try Data(foreign.certificateDER).write(to: URL(fileURLWithPath: der))
        XCTAssertThrowsError(try CAImportCommand.parse(["--data-dir", dataDirectory.path, "--cert", der]).run()) {
            XCTAssertTrue("\($0)".contains("is not PEM text"), "\($0)")
        }
        XCTAssertNil(try store.load())
    }

    /// A damaged stored CA stops `ca show` with the file and the fix instead of replacing it.
    func testDamagedAuthorityIsReportedByShow() throws {
        _ = try store.loadOrCreate()
        try "garbage".write(toFile: store.certificatePEMPath, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CAShowCommand.parse(["--data-dir", dataDirectory.path]).run()) {
            let text = "\($0)"
            XCTAssertTrue(text.contains(self.store.certificatePEMPath), text)
            XCTAssertTrue(text.contains("proxyapp ca regenerate"), text)
        }
    }
}

/// The POSIX permission bits of a file.
enum TemporaryFileMode {
    static func of(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
