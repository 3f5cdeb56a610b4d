import Foundation
import X509

/// Where the root CA lives between runs (`<data-dir>/ca/`, mode 0700): the certificate as PEM
/// (`ProxyCA.pem`) and DER (`ProxyCA.cer`) for installing into clients, and the private key
/// (`ProxyCA-key.pem`, mode 0600). The first start creates them and later starts reuse them; a
/// damaged or mismatched file is an error naming the file, never silently replaced, because every
/// client trusts exactly the stored certificate. Writes are atomic and serialised between
/// processes by a lock file.
public struct CertificateAuthorityStore: Sendable {
    public static let certificatePEMName = "ProxyCA.pem"
    public static let certificateDERName = "ProxyCA.cer"
    public static let privateKeyName = "ProxyCA-key.pem"

    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    public var certificatePEMPath: String { path(Self.certificatePEMName) }
    public var certificateDERPath: String { path(Self.certificateDERName) }
    public var privateKeyPath: String { path(Self.privateKeyName) }

    /// The stored CA, created first if there is none yet.
    public func loadOrCreate() throws -> CertificateAuthority {
        try loadOrCreateReportingCreation().authority
    }

    /// The stored CA, created first if there is none yet; `created` says which happened, so a
    /// caller can tell the user to install the new certificate.
    public func loadOrCreateReportingCreation() throws -> (authority: CertificateAuthority, created: Bool) {
        try storage.withExclusiveLock {
            if let existing = try loadUnlocked() { return (existing, false) }
            let authority = try CertificateAuthority.generate()
            try write(authority)
            return (authority, true)
        }
    }

    /// The stored CA, or nil when none has been created yet. Creates nothing.
    public func load() throws -> CertificateAuthority? {
        guard FileManager.default.fileExists(atPath: directory.path) else { return nil }
        return try storage.withExclusiveLock { try loadUnlocked() }
    }

    /// Replaces the stored CA (if any) with a new one. Clients must trust the new certificate.
    /// `precondition` runs first, under the store's lock (a process loading the CA meanwhile
    /// waits for the new one); an error it throws leaves the CA as it was.
    public func regenerate(precondition: () throws -> Void = {}) throws -> CertificateAuthority {
        try storage.withExclusiveLock {
            try precondition()
            let authority = try CertificateAuthority.generate()
            try write(authority)
            return authority
        }
    }

    /// Replaces the stored CA with one made elsewhere (mitmproxy, Charles, openssl). The key may be
    /// in `privateKeyPEM` or in `certificatePEM` (mitmproxy's `mitmproxy-ca.pem` holds both; pass
    /// the same text twice or an empty key). Errors are `CertificateAuthorityError`s about the text.
    /// `precondition` runs as in `regenerate`.
    public func importAuthority(certificatePEM: String, privateKeyPEM: String,
                                precondition: () throws -> Void = {}) throws -> CertificateAuthority {
        let (certificate, privateKey) = try AuthorityPEMReader.read([certificatePEM, privateKeyPEM])
        let authority = try CertificateAuthority(certificate: certificate, privateKey: privateKey)
        try storage.withExclusiveLock {
            try precondition()
            try write(authority)
        }
        return authority
    }

    private var storage: PrivateDirectory { PrivateDirectory(url: directory) }

    private func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    private func loadUnlocked() throws -> CertificateAuthority? {
        switch (storage.fileExists(Self.certificatePEMName), storage.fileExists(Self.privateKeyName)) {
        case (false, false):
            return nil
        case (true, false):
            throw CertificateAuthorityError.storedFileMissing(path: privateKeyPath, companion: certificatePEMPath)
        case (false, true):
            throw CertificateAuthorityError.storedFileMissing(path: certificatePEMPath, companion: privateKeyPath)
        case (true, true):
            break
        }
        // A key left readable (an older version, a copy with cp -r under a loose umask) is
        // made 0600 again: whoever reads it can sign certificates every client trusts.
        _ = storage.restrictFiles(named: [Self.privateKeyName])
        let certificate: Certificate
        do { certificate = try Certificate(pemEncoded: try storedText(Self.certificatePEMName)) } catch {
            throw unusable(certificatePEMPath, error, else: .unreadableCertificate(reason: DecodingFailureReason.of(error)))
        }
        let privateKey: Certificate.PrivateKey
        do { privateKey = try Certificate.PrivateKey(pemEncoded: try storedText(Self.privateKeyName)) } catch {
            throw unusable(privateKeyPath, error, else: .unreadablePrivateKey(reason: DecodingFailureReason.of(error)))
        }
        let authority: CertificateAuthority
        do { authority = try CertificateAuthority(certificate: certificate, privateKey: privateKey) } catch {
            let culprit: String
            switch error as? CertificateAuthorityError {
            case .keyDoesNotMatchCertificate?: culprit = "\(privateKeyPath) and \(certificatePEMPath)"
            case .unsupportedKeyType?: culprit = privateKeyPath
            default: culprit = certificatePEMPath
            }
            throw unusable(culprit, error, else: .unreadableCertificate(reason: DecodingFailureReason.of(error)))
        }
        try refreshDERCopy(of: authority)
        return authority
    }

    private func storedText(_ name: String) throws -> String {
        String(decoding: try storage.read(name), as: UTF8.self)
    }

    /// File-system errors pass through; a problem with the content is reported against `path`.
    private func unusable(_ path: String, _ error: any Error, else fallback: CertificateAuthorityError) -> any Error {
        switch error as? CertificateAuthorityError {
        case .fileSystem?: return error
        case let problem?: return CertificateAuthorityError.storedAuthorityUnusable(path: path, problem: problem)
        case nil: return CertificateAuthorityError.storedAuthorityUnusable(path: path, problem: fallback)
        }
    }

    /// `ProxyCA.cer` is derived from `ProxyCA.pem` and holds nothing secret: rewritten when missing or stale.
    private func refreshDERCopy(of authority: CertificateAuthority) throws {
        if storage.fileExists(Self.certificateDERName),
           (try? storage.read(Self.certificateDERName)) == authority.certificateDER {
            return
        }
        try storage.replace([.init(name: Self.certificateDERName, bytes: authority.certificateDER, mode: 0o644)])
    }

    /// The key is renamed first: a crash between renames leaves a pair that loading reports as
    /// mismatched, never a certificate that silently lost its key.
    private func write(_ authority: CertificateAuthority) throws {
        try storage.replace([
            .init(name: Self.privateKeyName, bytes: Array(try authority.privateKeyPEM().utf8), mode: 0o600),
            .init(name: Self.certificatePEMName, bytes: Array(authority.certificatePEM.utf8), mode: 0o644),
            .init(name: Self.certificateDERName, bytes: authority.certificateDER, mode: 0o644),
        ])
    }
}
