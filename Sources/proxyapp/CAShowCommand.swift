import ArgumentParser
import Foundation
import ProxyTLS

/// `proxyapp ca show`: what a user compares against the browser's certificate viewer.
struct CAShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the root CA's subject, validity, fingerprint and files.")

    @OptionGroup var data: DataDirectoryOptions

    func run() throws {
        let authority = try data.loadOrCreateAuthority()
        print(Self.report(authority, store: data.certificateAuthorityStore))
    }

    static func report(_ authority: CertificateAuthority, store: CertificateAuthorityStore) -> String {
        let certificate = authority.certificate
        let lines: [(String, String)] = [
            ("Subject", certificate.subject.description),
            ("Issuer", certificate.issuer.description),
            ("Serial", authority.serialNumberHex),
            ("Valid from", certificate.notValidBefore.formatted(.iso8601)),
            ("Valid until", certificate.notValidAfter.formatted(.iso8601)),
            ("SHA-256", authority.sha256Fingerprint),
            ("Key", authority.keyDescription),
            ("Certificate", "\(store.certificatePEMPath) (DER: \(store.certificateDERPath))"),
            ("Private key", store.privateKeyPath),
        ]
        return lines.map { label, value in
            (label + ":").padding(toLength: 13, withPad: " ", startingAt: 0) + value
        }.joined(separator: "\n")
    }
}
