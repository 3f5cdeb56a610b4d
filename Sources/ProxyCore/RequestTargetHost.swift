/// The host of a request-target, checked and put in `HostName.normalized` form before anything
/// matches or dials it.
///
/// Rules match the host as text and the resolver dials a host as text, so both must see the
/// same text: a spelling the resolver reads differently from the rules (`0x7f.1` is
/// 127.0.0.1 to `getaddrinfo`, `%31%32%37.0.0.1` is nothing to it) would slip past a block rule.
/// So every host is either rewritten to its one canonical form (case, one trailing dot, every
/// IPv4 notation as WHATWG URL and `inet_ntop` write it, IPv6 as `inet_ntop` writes it,
/// IPv4-mapped IPv6 as IPv4) or refused with a reason, and the canonical text is what the
/// whole proxy uses from then on: rules, the resolver, the flow, the `Host` sent upstream.
///
/// Refused (browsers and curl never send these; they canonicalize first): percent-encoding,
/// IPv6 zones, non-ASCII (send punycode), characters WHATWG URL forbids in hosts, empty
/// labels, an unbracketed `:`, brackets around anything but IPv6, a host that ends in a
/// number but is no IPv4 address (`1.2.3.4.5`, `a.0x10`: WHATWG URL refuses them too), and the
/// unspecified addresses `0.0.0.0` and `::`, which Linux connects to this machine.
enum RequestTargetHost {
    /// The canonical form of `host` (the text between `[` `]` when `bracketed`).
    static func canonical(_ host: Substring.UTF8View, bracketed: Bool) throws(RequestTargetError) -> String {
        let canonical = bracketed ? try ipv6(host) : try name(host)
        if canonical == "0.0.0.0" || canonical == "::" {
            throw .invalid("host '\(shown(host, bracketed))' is the unspecified address \(canonical), not a destination")
        }
        return canonical
    }

    private static func ipv6(_ host: Substring.UTF8View) throws(RequestTargetError) -> String {
        if host.contains(UInt8(ascii: "%")) {
            throw .invalid("IPv6 zone identifiers are not supported: '[\(Substring(host).prefix(200))]'")
        }
        guard let address = IPAddressText.canonicalIPv6(Substring(host)) else {
            throw .invalid("'[\(Substring(host).prefix(200))]' is not an IPv6 address (only IPv6 goes in brackets)")
        }
        return address
    }

    private static func name(_ host: Substring.UTF8View) throws(RequestTargetError) -> String {
        var labelLength = 0
        for byte in host {
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0 else { throw .invalid("host '\(shown(host))' has an empty label") }
                labelLength = 0
                continue
            }
            labelLength += 1
            guard byte > 0x20, byte < 0x7F, !isForbidden(byte) else { throw refusal(byte, host) }
        }
        var text = String(Substring(host))
        // Names and dotted quads already in canonical form: one byte scan, nothing to check.
        if text.withUTF8({ HostName.isAlreadyNormalized($0) }) { return text }
        let normalized = HostName.normalizedSlowly(text)
        if IPv4Notation.endsInNumber(normalized.utf8), IPv4Notation.address(normalized.utf8) == nil {
            throw .invalid("host '\(shown(host))' ends in a number but is not an IPv4 address")
        }
        return normalized
    }

    /// WHATWG URL's forbidden host code points, and `:` (only IPv6, in brackets, has one).
    private static func isForbidden(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "#"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "<"), UInt8(ascii: ">"),
             UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"), UInt8(ascii: "]"),
             UInt8(ascii: "^"), UInt8(ascii: "|"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }

    private static func refusal(_ byte: UInt8, _ host: Substring.UTF8View) -> RequestTargetError {
        let shown = shown(host)
        switch byte {
        case UInt8(ascii: "%"):
            return .invalid("host '\(shown)' is percent-encoded: send the host itself")
        case UInt8(ascii: ":"):
            return .invalid("host '\(shown)' has a ':': an IPv6 address goes in brackets, as in [::1]:443")
        case UInt8(ascii: "@"):
            return .invalid("host '\(shown)' has an '@': user information is not allowed there")
        case 0x80...:
            return .invalid("host '\(shown)' is not ASCII: send an internationalized name in punycode (xn--)")
        default:
            return .invalid("invalid host '\(shown)'")
        }
    }

    private static func shown(_ host: Substring.UTF8View, _ bracketed: Bool = false) -> String {
        let text = Substring(host).prefix(200)
        return bracketed ? "[\(text)]" : String(text)
    }
}
