import Foundation
import NIOSSL
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CertificateFacts {
    /// Reads `certificate` with swift-certificates; nil when its DER does not parse.
    public init?(_ certificate: NIOSSLCertificate) {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else { return nil }
        let extensions = parsed.extensions
        var names: [String] = []
        for name in (try? extensions.subjectAlternativeNames) ?? SubjectAlternativeNames() {
            switch name {
            case .dnsName(let host): names.append(host)
            case .ipAddress(let octets): names.append(Self.addressText(Array(octets.bytes)))
            default: break
            }
        }
        var allowsServerAuth = true
        if let usage = try? extensions.extendedKeyUsage {
            allowsServerAuth = usage.contains(.serverAuth) || usage.contains(.any)
        }
        var isAuthority = false
        if case .isCertificateAuthority? = try? extensions.basicConstraints { isAuthority = true }
        self.init(subject: parsed.subject.description, issuer: parsed.issuer.description,
                  notBefore: parsed.notValidBefore, notAfter: parsed.notValidAfter, names: names,
                  isSelfIssued: parsed.subject == parsed.issuer, allowsServerAuth: allowsServerAuth,
                  isCertificateAuthority: isAuthority)
    }

    /// An iPAddress SAN (4 or 16 bytes) as text; anything else as hex.
    static func addressText(_ bytes: [UInt8]) -> String {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return bytes.map { String($0, radix: 16) }.joined(separator: ":")
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
