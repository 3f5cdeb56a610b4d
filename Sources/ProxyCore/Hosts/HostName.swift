/// The one canonical text of a host, so that every host comparison in the proxy (rules, the
/// SSL-proxying lists, pin keys) is a plain byte comparison.
///
/// `normalized` makes these spellings equal:
/// - case: ASCII is lower-cased; a label with non-ASCII characters is lower-cased with Swift's
///   `lowercased()` and then written as `xn--` + Punycode. This is not the full UTS #46 mapping
///   (no width folding, no ideographic full stops as dots, no NFC step, no validity checks):
///   it covers what people type in rules and what browsers send (which is already punycode);
/// - a single trailing dot (`example.com.`, the DNS root) is dropped;
/// - IP literals: `[` `]` around an IPv6 address are removed and IPv4/IPv6 addresses are
///   rewritten the way `inet_ntop` prints them (`0:0::1` → `::1`); an IPv6 zone (`%eth0`) is
///   kept, lower-cased, after the address. Bracketed text that is not an IPv6 address keeps
///   its brackets, so it can never equal a real name;
/// - every other IPv4 notation the resolver and browsers accept (`2130706433`, `0x7f.1`,
///   `0177.0.0.1`, `127.1`: `IPv4Notation`) becomes the dotted quad, and an IPv4-mapped IPv6
///   address (`::ffff:127.0.0.1`) becomes its IPv4 address, since that is where a connection
///   to it goes.
///
/// It does not validate: `a..b` stays `a..b`, and so does `1.2.3.4.5` (a number that is no
/// address). `HostPattern` refuses such patterns itself, `RequestTarget` such request hosts.
public enum HostName {
    /// The canonical form of `host` (see the type's documentation).
    ///
    /// Called per request: a host that is already lower-case ASCII `[a-z0-9._-]` without a
    /// trailing dot is returned as it is, after one pass over its bytes and without allocating
    /// (for a `String` argument).
    public static func normalized(_ host: some StringProtocol) -> String {
        if isAlreadyNormalized(host.utf8) { return String(host) }
        return normalizedSlowly(String(host))
    }

    /// `normalized` for a `String`, the per-request case, without generic dispatch: the fast
    /// path scans the contiguous bytes in place.
    public static func normalized(_ host: String) -> String {
        var host = host
        if host.withUTF8({ isAlreadyNormalized($0) }) { return host }
        return normalizedSlowly(host)
    }

    /// Whether `normalized` (output of `normalized(_:)`) is an IPv4 or IPv6 address (an IPv6
    /// one possibly with a zone), rather than a name.
    public static func isIPAddress(_ normalized: String) -> Bool {
        IPAddressText.isIPAddress(normalized)
    }

    /// True when `bytes` are non-empty lower-case ASCII letters, digits, `.`, `-`, `_`, do not
    /// end in a dot, and either do not end in a number (`IPv4Notation.endsInNumber`) or are a
    /// dotted quad as `inet_ntop` prints it: exactly the hosts the slow path returns unchanged.
    /// One pass; the dotted-quad check rides along (per label: digits only, value, leading zero).
    static func isAlreadyNormalized(_ bytes: some Collection<UInt8>) -> Bool {
        var last: UInt8 = UInt8(ascii: ".")
        var labels = 1
        var quadSoFar = true  // every finished label is a decimal octet without a leading zero
        var length = 0, value = 0, first: UInt8 = 0, second: UInt8 = 0
        var digitsOnly = true, hexTail = true  // this label: all digits; bytes after its 2nd all hex
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                if !digitsOnly || length == 0 || length > 3 || value > 255 || (length > 1 && first == UInt8(ascii: "0")) {
                    quadSoFar = false
                }
                labels += 1
                length = 0; value = 0; first = 0; second = 0; digitsOnly = true; hexTail = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if length < 4 { value = value * 10 + Int(byte &- UInt8(ascii: "0")) }
                length += 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                digitsOnly = false
                if length >= 2, byte > UInt8(ascii: "f") || byte < UInt8(ascii: "a") { hexTail = false }
                length += 1
            default:
                return false
            }
            if length == 1 { first = byte } else if length == 2 { second = byte }
            last = byte
        }
        guard last != UInt8(ascii: ".") else { return false }
        let endsInNumber = digitsOnly || (first == UInt8(ascii: "0") && second == UInt8(ascii: "x") && hexTail)
        guard endsInNumber else { return true }
        return digitsOnly && quadSoFar && labels == 4 && length <= 3 && value <= 255
            && !(length > 1 && first == UInt8(ascii: "0"))
    }

    /// The general case: brackets, IP literals, trailing dot, case and IDN labels.
    static func normalizedSlowly(_ host: String) -> String {
        let utf8 = host.utf8
        if utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]"), utf8.count >= 2 {
            let inner = host.dropFirst().dropLast()
            return IPAddressText.canonicalIPv6(inner) ?? lowercasedLabels(host[...])
        }
        if utf8.contains(UInt8(ascii: ":")), let address = IPAddressText.canonicalIPv6(host) {
            return address
        }
        var name = host[...]
        if name.utf8.last == UInt8(ascii: ".") { name = name.dropLast() }
        if IPv4Notation.endsInNumber(name.utf8), let address = IPv4Notation.address(name.utf8) {
            return IPv4Notation.dottedQuad(address)
        }
        return lowercasedLabels(name)
    }

    /// `name` with ASCII lower-cased and every label holding non-ASCII characters replaced by
    /// `xn--` + the Punycode of its `lowercased()` form (kept as Unicode if that overflows).
    private static func lowercasedLabels(_ name: Substring) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(name.utf8.count)
        var first = true
        for labelBytes in name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            if !first { output.append(UInt8(ascii: ".")) }
            first = false
            if labelBytes.allSatisfy({ $0 < 0x80 }) {
                for byte in labelBytes { output.append(lowercasedASCII(byte)) }
                continue
            }
            let lowered = Substring(labelBytes).lowercased()
            if let encoded = Punycode.encode(lowered) {
                output.append(contentsOf: "xn--".utf8)
                output.append(contentsOf: encoded.utf8)
            } else {
                output.append(contentsOf: lowered.utf8)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
