import Foundation
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The name a leaf is minted for, in the one form the minter and the cache both key on: lower
/// case, without IPv6 brackets or a trailing dot. An IP literal (`10.0.0.1`, `::1`, `[::1]`)
/// becomes an iPAddress SAN (clients send no SNI for IPs and check the address); anything else
/// must be an ASCII DNS name (IDNs arrive in punycode) and becomes a dNSName SAN. Never a
/// wildcard: the name comes from a client (SNI, the CONNECT host), and `*.com` would be a
/// certificate for every host under it.
struct LeafHost: Hashable, Sendable {
    /// The normalised host: the cache key and the certificate's common name.
    let name: String
    /// The SAN entry that names it.
    let subjectAlternativeName: GeneralName

    init(parsing host: String) throws {
        var text = host.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let address = Self.ipAddressBytes(text) {
            name = text
            subjectAlternativeName = .ipAddress(ASN1OctetString(contentBytes: address[...]))
            return
        }
        if text.hasSuffix(".") { text.removeLast() }
        guard Self.isDNSName(text) else { throw LeafMintingError.invalidHost(host) }
        name = text
        subjectAlternativeName = .dnsName(text)
    }

    /// The 4 or 16 network-order bytes of an IPv4 or IPv6 literal, or nil.
    private static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Labels of letters, digits, `-` and `_` (seen in the wild), 1–63 bytes each, 253 bytes
    /// in all; no `*` anywhere.
    private static func isDNSName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty, label.count <= 63 else { return false }
            let valid = label.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard valid else { return false }
        }
        return true
    }
}

/// Why a leaf could not be minted.
public enum LeafMintingError: Error, CustomStringConvertible, Equatable {
    /// Not an IP literal and not a valid ASCII DNS name.
    case invalidHost(String)
    /// The root CA's validity has ended, so no leaf it signs can be valid.
    case authorityExpired(notAfter: Date)

    public var description: String {
        switch self {
        case .invalidHost(let host):
            return "cannot mint a certificate for '\(host)': not a DNS name or an IP address"
        case .authorityExpired(let notAfter):
            return "the root CA expired on \(notAfter.formatted(.iso8601)): run `proxyapp ca regenerate`"
        }
    }
}
