/// Decides whether bytes a peer sent as a host name are a DNS name we can put in a certificate
/// and a log line: ASCII letters, digits, `-` and `_` in dot-separated labels.
///
/// SNI carries a host name "in ASCII, without a trailing dot" (RFC 6066 §3) and never an IP
/// literal; anything else from the wire is treated as if no name had been sent.
public enum DNSHostName {
    static let maximumLength = 253
    static let maximumLabelLength = 63

    /// True when `host` is a DNS host name a certificate can be made for (one trailing dot, the
    /// DNS root, allowed): no wildcard, no pattern, no IP literal, no empty label.
    public static func isValid(_ host: String) -> Bool {
        var bytes = Array(host.utf8)[...]
        if bytes.last == UInt8(ascii: ".") { bytes = bytes.dropLast() }
        return validated(bytes) != nil
    }

    /// The name lowercased, or nil when `bytes` are not a valid DNS host name.
    static func validated(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return nil }
        var lowercased: [UInt8] = []
        lowercased.reserveCapacity(bytes.count)
        var labelLength = 0
        var labelIsNumeric = true
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                // No empty label, no label ending in '-' (RFC 1123 §2.1).
                guard labelLength > 0, previous != UInt8(ascii: "-") else { return nil }
                labelLength = 0
                labelIsNumeric = true
            case UInt8(ascii: "-"):
                guard labelLength > 0 else { return nil }  // no label starting with '-'
                labelLength += 1
                labelIsNumeric = false
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                labelLength += 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"):
                labelLength += 1
                labelIsNumeric = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                labelLength += 1
                labelIsNumeric = false
            default:
                return nil
            }
            guard labelLength <= maximumLabelLength else { return nil }
            lowercased.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            previous = byte
        }
        // A trailing dot or '-' is not allowed; an all-numeric last label is an IPv4 literal.
        guard labelLength > 0, previous != UInt8(ascii: "-"), !labelIsNumeric else { return nil }
        return String(decoding: lowercased, as: UTF8.self)
    }
}
