/// The other spellings of an IPv4 address: `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`,
/// `0x7f000001` all mean `127.0.0.1` to the C library's `inet_aton` (so to `getaddrinfo`, which
/// the proxy resolves with) and to browsers, whose URL parser (WHATWG URL, "IPv4 parser")
/// rewrites them to the dotted quad before sending.
///
/// Hosts are compared as text, so a rule on `127.0.0.1` would miss `127.1` while the resolver
/// still dialled 127.0.0.1. `HostName.normalized` therefore rewrites every spelling this type
/// reads into the dotted quad, exactly as WHATWG URL does: a host whose last label is a number
/// (decimal, `0x` hex or `0` octal) is an IPv4 address or invalid, never a name.
/// Works on ASCII bytes; letters may be upper or lower case.
enum IPv4Notation {
    /// WHATWG's "ends in a number": the last label (after one trailing dot is dropped) is all
    /// decimal digits, or `0x`/`0X` followed by hex digits (none is fine: `0x` is zero).
    static func endsInNumber(_ bytes: some BidirectionalCollection<UInt8>) -> Bool {
        var end = bytes.endIndex
        if end != bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: ".") {
            end = bytes.index(before: end)
            if end == bytes.startIndex { return false }
        }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: ".")).map { bytes.index(after: $0) } ?? bytes.startIndex
        let label = bytes[start..<end]
        guard let first = label.first else { return false }
        if label.allSatisfy(isDigit) { return true }
        guard first == UInt8(ascii: "0"), label.count >= 2 else { return false }
        let second = label[label.index(after: label.startIndex)]
        return (second | 0x20) == UInt8(ascii: "x") && label.dropFirst(2).allSatisfy(isHexDigit)
    }

    /// The address `bytes` spell (WHATWG's IPv4 parser, which agrees with glibc's `inet_aton`
    /// on every input both accept), or nil when they are not an IPv4 address in any notation.
    /// One trailing dot is allowed. One pass, no allocation: every part but the last is an
    /// octet, the last fills the bytes that are left (`127.1`: 127, then 1 in three bytes).
    static func address(_ bytes: some BidirectionalCollection<UInt8>) -> UInt32? {
        var text = bytes[...]
        if text.last == UInt8(ascii: ".") { text = text.dropLast() }
        var prefix: UInt64 = 0
        var parts: UInt64 = 0
        var start = text.startIndex
        while true {
            let end = text[start...].firstIndex(of: UInt8(ascii: ".")) ?? text.endIndex
            guard let number = number(text[start..<end]) else { return nil }
            parts += 1
            if end == text.endIndex {
                guard parts <= 4, number < (1 as UInt64) << (8 * (5 - parts)) else { return nil }
                return UInt32(truncatingIfNeeded: prefix << (8 * (5 - parts)) | number)
            }
            guard parts < 4, number <= 255 else { return nil }
            prefix = prefix << 8 | number
            start = text.index(after: end)
        }
    }

    /// `address` as a dotted quad, `a.b.c.d` in decimal without leading zeros (what `inet_ntop`
    /// prints).
    static func dottedQuad(_ address: UInt32) -> String {
        var text = ""
        text.reserveCapacity(15)
        for shift in stride(from: 24, through: 0, by: -8) {
            if shift != 24 { text.append(".") }
            text += String((address >> UInt32(shift)) & 0xFF)
        }
        return text
    }

    /// One part: decimal, `0x` hex (possibly empty: zero) or `0` octal; nil when a digit is not
    /// of its radix, or past 2^32 (no part of a valid address is that large).
    private static func number(_ part: some Collection<UInt8>) -> UInt64? {
        guard let first = part.first else { return nil }
        var digits = part[...]
        var radix: UInt64 = 10
        if first == UInt8(ascii: "0"), part.count >= 2 {
            let second = part[part.index(after: part.startIndex)]
            if (second | 0x20) == UInt8(ascii: "x") {
                radix = 16
                digits = digits.dropFirst(2)
            } else {
                radix = 8
                digits = digits.dropFirst()
            }
        }
        var value: UInt64 = 0
        for byte in digits {
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            guard digit < radix else { return nil }
            value = value * radix + digit
            if value > UInt64(UInt32.max) + 1 { return nil }
        }
        return value
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "f"))
    }
}
