import Foundation
import NIOSSL
import X509

/// The parts of an origin's certificate a user looks at when a flow goes wrong: who it names,
/// who signed it and when it expires. Recorded on every decrypted flow.
public struct PeerCertificateSummary: Sendable, Hashable {
    public var subject: String
    public var issuer: String
    public var notAfter: Date

    public init(subject: String, issuer: String, notAfter: Date) {
        self.subject = subject
        self.issuer = issuer
        self.notAfter = notAfter
    }

    /// Reads `certificate`; nil when its DER does not parse (then there is nothing to show).
    public init?(_ certificate: NIOSSLCertificate) {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
            return nil
        }
        self.init(subject: parsed.subject.description, issuer: parsed.issuer.description,
                  notAfter: parsed.notValidAfter)
    }
}
