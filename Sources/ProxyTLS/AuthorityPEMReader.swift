import SwiftASN1
import X509

/// Reads a CA certificate and its private key out of PEM text as other tools export them:
/// separate files (Charles, `openssl`), or one file holding both (mitmproxy's `mitmproxy-ca.pem`).
/// Keys may be PKCS#8 (`PRIVATE KEY`), SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`);
/// blocks of other kinds (`EC PARAMETERS`, …) are skipped. When several certificates are given,
/// the one the key belongs to is taken.
enum AuthorityPEMReader {
    private static let privateKeyTypes: Set<String> = ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"]

    static func read(_ texts: [String]) throws -> (certificate: Certificate, privateKey: Certificate.PrivateKey) {
        var certificates: [Certificate] = []
        var keys: [Certificate.PrivateKey] = []
        for document in try documents(in: texts) {
            switch document.discriminator {
            case "CERTIFICATE":
                do { certificates.append(try Certificate(derEncoded: document.derBytes)) } catch {
                    throw CertificateAuthorityError.unreadableCertificate(reason: DecodingFailureReason.of(error))
                }
            case "ENCRYPTED PRIVATE KEY":
                throw CertificateAuthorityError.encryptedPrivateKey
            case let type where privateKeyTypes.contains(type):
                let key: Certificate.PrivateKey
                do { key = try Certificate.PrivateKey(pemDocument: document) } catch {
                    throw CertificateAuthorityError.unreadablePrivateKey(reason: DecodingFailureReason.of(error))
                }
                if !keys.contains(key) { keys.append(key) }
            default:
                continue
            }
        }
        guard !certificates.isEmpty else { throw CertificateAuthorityError.noCertificate }
        guard let key = keys.first else { throw CertificateAuthorityError.noPrivateKey }
        guard keys.count == 1 else { throw CertificateAuthorityError.multiplePrivateKeys }
        guard let certificate = certificates.first(where: { $0.publicKey == key.publicKey }) else {
            throw CertificateAuthorityError.keyDoesNotMatchCertificate
        }
        return (certificate, key)
    }

    /// Every PEM block of every text. Legacy OpenSSL encryption (`Proc-Type: 4,ENCRYPTED` headers
    /// inside a block) is reported as an encrypted key rather than as undecodable base64.
    private static func documents(in texts: [String]) throws -> [PEMDocument] {
        var documents: [PEMDocument] = []
        for text in texts {
            if text.contains("Proc-Type: 4,ENCRYPTED") { throw CertificateAuthorityError.encryptedPrivateKey }
            do { documents += try PEMDocument.parseMultiple(pemString: text) } catch {
                throw CertificateAuthorityError.invalidPEM(reason: DecodingFailureReason.of(error))
            }
        }
        return documents
    }
}
