import ArgumentParser
import Foundation
import ProxyTLS

/// `proxyapp ca`: the root CA that HTTPS interception signs leaves with, kept in `<data-dir>/ca/`.
/// Clients accept intercepted HTTPS only once they trust its certificate, so these commands find,
/// show and export it, and replace it (with a new one or one from mitmproxy/Charles) on request.
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Show, export, regenerate or import the root CA used for HTTPS interception.",
        discussion: """
            The CA lives in <data-dir>/ca/ (ProxyCA.pem, ProxyCA.cer, and the private key \
            ProxyCA-key.pem, readable only by you). `path`, `show` and `export` create it if it \
            does not exist yet.
            """,
        subcommands: [
            CAPathCommand.self, CAShowCommand.self, CAExportCommand.self, CARegenerateCommand.self, CAImportCommand.self,
        ]
    )
}

extension DataDirectoryOptions {
    /// The root CA's files: `<data-dir>/ca/`.
    var certificateAuthorityStore: CertificateAuthorityStore {
        CertificateAuthorityStore(directory: directory.appendingPathComponent("ca"))
    }

    /// The stored CA, created if missing (saying so on stderr, since clients must then trust it).
    func loadOrCreateAuthority() throws -> CertificateAuthority {
        let store = certificateAuthorityStore
        let (authority, created) = try store.loadOrCreateReportingCreation()
        if created {
            StandardError.print(
                "Created a new root CA in \(store.directory.path). Clients must trust \(store.certificatePEMPath) to accept intercepted HTTPS.")
        }
        return authority
    }
}

/// `proxyapp ca path`: the certificate's PEM path, for scripts (`curl --cacert "$(proxyapp ca path)"`).
struct CAPathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path", abstract: "Print the path of the root CA certificate (PEM).")

    @OptionGroup var data: DataDirectoryOptions

    func run() throws {
        _ = try data.loadOrCreateAuthority()
        print(data.certificateAuthorityStore.certificatePEMPath)
    }
}

/// `proxyapp ca regenerate`: a new root replaces the old one; every client must trust it again.
///
/// Refused while a proxy runs with the same data directory (`RunningProxies`): it would keep
/// signing with the old CA, so clients that trust the new one would fail and pin their hosts.
/// Reloading the CA in the running proxy was the alternative; refusing is simpler and leaves
/// nothing half-switched (leaf cache, CA download page, pins made in between), and a user who
/// regenerates must reinstall the CA in every client anyway.
struct CARegenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regenerate",
        abstract: "Replace the root CA with a new one (clients must then trust the new certificate).",
        discussion: "Refused while a proxy runs with this data directory: stop it first.")

    @OptionGroup var data: DataDirectoryOptions

    func run() throws {
        let store = data.certificateAuthorityStore
        let authority = try store.regenerate {
            try RunningProxies.refuseIfRunning(in: data.directory, command: "proxyapp ca regenerate")
        }
        print(Self.report(authority, store: store))
    }

    static func report(_ authority: CertificateAuthority, store: CertificateAuthorityStore) -> String {
        """
        Created a new root CA: \(authority.certificate.subject)
        SHA-256: \(authority.sha256Fingerprint)
        Clients that trusted the old CA must now trust the new one: install \(store.certificatePEMPath) \
        (or \(store.certificateDERPath)) again.
        """
    }
}

/// `proxyapp ca import`: use a CA made by another tool, e.g. mitmproxy's, so clients that already
/// trust it need no change.
struct CAImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace the root CA with an existing one (PEM certificate and unencrypted key).",
        discussion: """
            Accepts EC P-256/P-384 and RSA keys in PKCS#8, SEC1 or PKCS#1 PEM. mitmproxy's \
            ~/.mitmproxy/mitmproxy-ca.pem holds both: `proxyapp ca import --cert ~/.mitmproxy/mitmproxy-ca.pem`. \
            Refused while a proxy runs with this data directory: stop it first.
            """)

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: "PEM file with the CA certificate (and maybe its key).")
    var cert: String

    @Option(help: "PEM file with the CA's private key (default: look for it in --cert).")
    var key: String?

    func run() throws {
        let certificateText = try Self.read(cert, flag: "--cert")
        let keyText = try key.map { try Self.read($0, flag: "--key") } ?? ""
        let store = data.certificateAuthorityStore
        let authority: CertificateAuthority
        do {
            authority = try store.importAuthority(certificatePEM: certificateText, privateKeyPEM: keyText) {
                try RunningProxies.refuseIfRunning(in: data.directory, command: "proxyapp ca import")
            }
        } catch let error as CertificateAuthorityError {
            throw CLIError(Self.message(for: error, cert: cert, key: key))
        }
        print("""
            Imported the root CA \(authority.certificate.subject) (\(authority.keyDescription)) into \(store.directory.path).
            SHA-256: \(authority.sha256Fingerprint)
            Clients must trust this certificate (\(store.certificatePEMPath)).
            """)
    }

    static func message(for error: CertificateAuthorityError, cert: String, key: String?) -> String {
        let source = key.map { "\(cert) and \($0)" } ?? cert
        var message = "cannot import \(source): \(error)"
        if error == .noPrivateKey, key == nil { message += ". Pass the key file with --key." }
        return message
    }

    private static func read(_ path: String, flag: String) throws -> String {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError("cannot read \(flag) \(path): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(
                "\(flag) \(path) is not PEM text (binary DER?). Convert it first: openssl x509 -inform der -in \(path) -out ca.pem")
        }
        return text
    }
}

/// Lines for stderr: notes that must not mix with what a command prints for scripts.
enum StandardError {
    static func print(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
