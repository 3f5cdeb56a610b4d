#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The canonical text of IP literals, through the C library's `inet_pton` and `inet_ntop`.
///
/// One address has many spellings (`0:0::1`, `::1`, `0000::0001`), and hosts are compared as
/// text, so `HostName` rewrites every literal into the one spelling `inet_ntop` prints. The C
/// library is the reference here on purpose: it is what the rest of the system parses with.
enum IPAddressText {
    /// `text` in `inet_ntop`'s spelling (lower-case hex, longest zero run as `::`) when it is an
    /// IPv6 address, optionally followed by `%zone`; the zone is kept, lower-cased. Else nil.
    /// An IPv4-mapped address without a zone (`::ffff:7f00:1`) comes back as its IPv4 dotted
    /// quad (`127.0.0.1`): a connection to it reaches that IPv4 address.
    static func canonicalIPv6(_ text: some StringProtocol) -> String? {
        let string = String(text)
        let percent = string.utf8.firstIndex(of: UInt8(ascii: "%"))
        let addressPart = percent.map { string[..<$0] } ?? Substring(string)
        guard addressPart.utf8.contains(UInt8(ascii: ":")) else { return nil }
        var address = in6_addr()
        guard String(addressPart).withCString({ inet_pton(AF_INET6, $0, &address) }) == 1 else { return nil }
        if percent == nil, let mapped = withUnsafeBytes(of: &address, ipv4Mapped) {
            return IPv4Notation.dottedQuad(mapped)
        }
        guard var canonical = withUnsafeBytes(of: &address, {
            format(family: AF_INET6, address: $0, capacity: Int(INET6_ADDRSTRLEN))
        }) else { return nil }
        if let percent {
            let zone = string[string.utf8.index(after: percent)...]
            guard !zone.isEmpty else { return nil }
            canonical += "%" + zone.lowercased()
        }
        return canonical
    }

    /// Whether `text` is an IPv4 or IPv6 literal (an IPv6 one may carry a `%zone`), without
    /// allocating for native strings.
    static func isIPAddress(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        var colon = false
        var percent = false
        var onlyDigitsAndDots = true
        for byte in text.utf8 {
            if byte == UInt8(ascii: ":") { colon = true }
            if byte == UInt8(ascii: "%") { percent = true }
            if byte != UInt8(ascii: ".") && !isDigit(byte) { onlyDigitsAndDots = false }
        }
        if colon {
            if percent { return canonicalIPv6(text) != nil }
            var address = in6_addr()
            return text.withCString { inet_pton(AF_INET6, $0, &address) } == 1
        }
        guard onlyDigitsAndDots else { return false }
        var address = in_addr()
        return text.withCString { inet_pton(AF_INET, $0, &address) } == 1
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2).
    private static func ipv4Mapped(_ bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else {
            return nil
        }
        return bytes[12...].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func format(family: Int32, address: UnsafeRawBufferPointer, capacity: Int) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer -> String? in
            guard let base = buffer.baseAddress,
                  inet_ntop(family, address.baseAddress, base, socklen_t(capacity)) != nil
            else { return nil }
            return String(cString: base)
        }
    }
}
