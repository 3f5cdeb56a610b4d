#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address as its network-order bytes (4 for IPv4, 16 for IPv6), so addresses and
/// networks compare by value whatever their spelling.
///
/// An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is read as the IPv4 address it reaches,
/// so a guard on `127.0.0.0/8` cannot be stepped around by spelling the address the IPv6 way.
public struct IPAddressBytes: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes[12...])
        } else {
            self.bytes = bytes
        }
    }

    /// Parses an IPv4 dotted quad or an IPv6 literal (brackets and a `%zone` are dropped).
    public init?(_ text: some StringProtocol) {
        var string = String(text)
        if string.hasPrefix("["), string.hasSuffix("]") { string = String(string.dropFirst().dropLast()) }
        if let percent = string.firstIndex(of: "%") { string = String(string[..<percent]) }
        if string.contains(":") {
            var address = in6_addr()
            guard string.withCString({ inet_pton(AF_INET6, $0, &address) }) == 1 else { return nil }
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        } else {
            var address = in_addr()
            guard string.withCString({ inet_pton(AF_INET, $0, &address) }) == 1 else { return nil }
            self.init(bytes: withUnsafeBytes(of: &address) { Array($0) })
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        isIPv4 ? bytes[0] == 127 : bytes == Self.ipv6Loopback
    }

    /// 169.254.0.0/16 or fe80::/10.
    public var isLinkLocal: Bool {
        isIPv4 ? bytes[0] == 169 && bytes[1] == 254 : bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
    }

    /// 0.0.0.0 or `::`: on Linux a connection to it reaches this machine.
    public var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(cString: buffer)
    }

    private static let ipv6Loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
}

/// A network in CIDR notation (`192.168.1.0/24`, `fd00::/8`, or one address, `10.0.0.7`), for
/// `--allow-clients`.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddressBytes
    public let prefixLength: Int

    /// Parses `ADDRESS[/PREFIX]`; nil with `error` set to what is wrong.
    public static func parse(_ text: String) -> Result<IPNetwork, IPNetworkError> {
        let trimmed = Substring(text).trimmingWhitespace()
        let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else { return .failure(.init(text: text, reason: "no address")) }
        guard let address = IPAddressBytes(first) else {
            return .failure(.init(text: text, reason: "'\(first)' is not an IPv4 or IPv6 address"))
        }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let number = Int(parts[1]), (0...bits).contains(number), parts[1].allSatisfy(\.isNumber) else {
                return .failure(.init(text: text, reason: "'/\(parts[1])' is not a prefix length from 0 to \(bits)"))
            }
            length = number
        }
        return .success(IPNetwork(address: address, prefixLength: length))
    }

    public init(address: IPAddressBytes, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    public func contains(_ other: IPAddressBytes) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for index in address.bytes.indices where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if address.bytes[index] & mask != other.bytes[index] & mask { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

/// Why a `--allow-clients` entry was refused, in words.
public struct IPNetworkError: Error, Hashable, Sendable, CustomStringConvertible {
    public let text: String
    public let reason: String
    public var description: String { "'\(text)' is not a network: \(reason) (write e.g. 192.168.1.0/24, 10.0.0.7 or fd00::/8)" }
}
