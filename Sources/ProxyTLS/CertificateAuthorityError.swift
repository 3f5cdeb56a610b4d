import Foundation

/// Why a root CA could not be created, loaded or imported: one line that names the problem and,
/// for stored files, the file and the fix. Stored files are never replaced behind the user's back,
/// because clients trust exactly that certificate.
public indirect enum CertificateAuthorityError: Error, CustomStringConvertible, Equatable {
    /// The text is not PEM (a `-----BEGIN …-----` block is malformed).
    case invalidPEM(reason: String)
    /// The text holds no `-----BEGIN CERTIFICATE-----` block.
    case noCertificate
    /// The text holds no unencrypted private key block.
    case noPrivateKey
    /// The text holds more than one private key, so which one signs is ambiguous.
    case multiplePrivateKeys
    /// The private key is password-protected; ProxyApp needs it in clear to sign leaves.
    case encryptedPrivateKey
    /// A certificate block could not be decoded.
    case unreadableCertificate(reason: String)
    /// A private key block could not be decoded.
    case unreadablePrivateKey(reason: String)
    /// The key is of a kind clients do not accept for a TLS CA (or ProxyApp cannot sign with).
    case unsupportedKeyType(String)
    /// No certificate in the text belongs to the private key.
    case keyDoesNotMatchCertificate
    /// The certificate may not issue certificates (no BasicConstraints CA:TRUE, or KeyUsage without keyCertSign).
    case notACertificateAuthority(subject: String)
    /// The certificate's validity has ended.
    case expired(subject: String, notAfter: Date)
    /// One of the stored pair (certificate, key) is missing while the other exists.
    case storedFileMissing(path: String, companion: String)
    /// A stored file exists but cannot be used; `problem` says why.
    case storedAuthorityUnusable(path: String, problem: CertificateAuthorityError)
    /// The file system refused an operation on `path`.
    case fileSystem(path: String, reason: String)

    /// The fix for a stored CA that cannot be used, repeated in every such message.
    static let regenerateAdvice =
        "Restore the file, or run `proxyapp ca regenerate` to create a new root CA (clients must then trust the new one)."

    public var description: String {
        switch self {
        case .invalidPEM(let reason):
            return "the text is not valid PEM (\(reason))"
        case .noCertificate:
            return "no certificate found (expected a PEM block starting with -----BEGIN CERTIFICATE-----)"
        case .noPrivateKey:
            return "no private key found (expected an unencrypted PEM key block: PKCS#8, SEC1 EC or PKCS#1 RSA)"
        case .multiplePrivateKeys:
            return "more than one private key found: give exactly one"
        case .encryptedPrivateKey:
            return "the private key is encrypted: decrypt it first, e.g. `openssl pkey -in key.pem -out plain-key.pem`"
        case .unreadableCertificate(let reason):
            return "the certificate cannot be read (\(reason))"
        case .unreadablePrivateKey(let reason):
            return "the private key cannot be read (\(reason))"
        case .unsupportedKeyType(let type):
            return "unsupported key type \(type): use an EC P-256, EC P-384 or RSA (2048 bits or more) key"
        case .keyDoesNotMatchCertificate:
            return "the private key does not belong to the certificate"
        case .notACertificateAuthority(let subject):
            return "the certificate '\(subject)' is not a certificate authority "
                + "(it needs BasicConstraints CA:TRUE and, if KeyUsage is present, keyCertSign)"
        case .expired(let subject, let notAfter):
            return "the certificate '\(subject)' expired on \(notAfter.formatted(.iso8601))"
        case .storedFileMissing(let path, let companion):
            return "\(path) is missing although \(companion) exists. \(Self.regenerateAdvice)"
        case .storedAuthorityUnusable(let path, let problem):
            return "\(path): \(problem). \(Self.regenerateAdvice)"
        case .fileSystem(let path, let reason):
            return "cannot use \(path): \(reason) (point --data-dir or PROXYAPP_HOME at a writable directory)"
        }
    }
}
