import Crypto

/// A JA4-style fingerprint of a ClientHello: what kind of TLS client this is, independent of
/// where it is going, so the auto-pin policy can tell a browser from a pinning app on one machine.
///
/// The shape is JA4's (FoxIO, `t13d1516h2_8daaf6152771_e5627efa2ab1`): `t`, the highest version
/// offered, the counts of cipher suites and extensions, the first and last character of the
/// first ALPN protocol; then the first 12 hex digits of the SHA-256 of the sorted cipher suites;
/// then those of the sorted extension types, `_`, and the signature algorithms in the client's
/// order. Sorting makes the extension order (which Chrome randomizes) irrelevant, and GREASE
/// values (RFC 8701) are left out everywhere. Where JA4 would make one client look like several,
/// this differs, because the fingerprint names a client, not a connection:
/// - no SNI letter (JA4's `d`/`i`), and the `server_name` extension is neither counted nor hashed:
///   a client going to an IP address sends none, and must stay the same client;
/// - `padding` (21), `pre_shared_key` (41) and `early_data` (42) are neither counted nor hashed:
///   they come and go with the hello's length and with session resumption.
/// Computed from `TLSClientHello`, which the parser has already bounded (64 KiB): any hello it
/// accepts has a fingerprint, and the work is linear in its size (plus a sort).
public enum ClientHelloFingerprint {
    /// The fingerprint of `hello`, e.g. `t131513h2_8daaf6152771_02713d6af862`.
    public static func of(_ hello: TLSClientHello) -> String {
        let ciphers = hello.cipherSuites.filter { !isGREASE($0) }
        let extensions = hello.extensionTypes.filter { !isGREASE($0) && !perConnectionExtensions.contains($0) }
        let hashedExtensions = extensions.filter { $0 != alpnExtension }.sorted()
        let signatures = hello.signatureAlgorithms.filter { !isGREASE($0) }
        var extensionText = hexList(hashedExtensions)
        if !signatures.isEmpty {
            extensionText.append(UInt8(ascii: "_"))
            extensionText += hexList(signatures)
        }
        let prefix = "t" + versionText(hello) + twoDigits(ciphers.count) + twoDigits(extensions.count)
            + alpnText(hello.alpnProtocols.first)
        return prefix + "_" + truncatedHash(hexList(ciphers.sorted()), empty: ciphers.isEmpty)
            + "_" + truncatedHash(extensionText, empty: hashedExtensions.isEmpty)
    }

    /// True for the 16 GREASE values (RFC 8701): `0x?A?A` with both bytes equal.
    public static func isGREASE(_ value: UInt16) -> Bool {
        value & 0x0F0F == 0x0A0A && value >> 8 == value & 0xFF
    }

    static let alpnExtension: UInt16 = 16
    /// Extensions that differ between connections of one client (see the type's comment).
    static let perConnectionExtensions: Set<UInt16> = [0, 21, 41, 42]

    /// The highest version in `supported_versions` (GREASE left out), else `legacy_version`: `13`,
    /// `12`, `11`, `10`, `s3`, or `00` for anything else.
    private static func versionText(_ hello: TLSClientHello) -> String {
        let offered = hello.supportedVersions.filter { !isGREASE($0) }.max() ?? hello.legacyVersion
        switch offered {
        case 0x0304: return "13"
        case 0x0303: return "12"
        case 0x0302: return "11"
        case 0x0301: return "10"
        case 0x0300: return "s3"
        default: return "00"
        }
    }

    /// A count as two digits, 99 at most.
    private static func twoDigits(_ count: Int) -> String {
        let capped = min(count, 99)
        return capped < 10 ? "0\(capped)" : "\(capped)"
    }

    /// The first and last character of the first ALPN protocol when both are ASCII letters or
    /// digits (`h2`, `h1` for `http/1.1`); otherwise the first hex digit of its first byte and the
    /// last hex digit of its last byte, as JA4 does; `00` without ALPN.
    private static func alpnText(_ first: String?) -> String {
        guard let bytes = first.map({ Array($0.utf8) }), let head = bytes.first, let tail = bytes.last else {
            return "00"
        }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        if isAlphanumeric(head), isAlphanumeric(tail) {
            return String(decoding: [head, tail], as: UTF8.self)
        }
        return String(decoding: [hexDigits[Int(head >> 4)], hexDigits[Int(tail & 0x0F)]], as: UTF8.self)
    }

    /// The first 12 hex digits of the SHA-256 of `text`; twelve zeros for an empty list (JA4).
    private static func truncatedHash(_ text: [UInt8], empty: Bool) -> String {
        guard !empty else { return "000000000000" }
        var digits: [UInt8] = []
        digits.reserveCapacity(12)
        for byte in SHA256.hash(data: text).prefix(6) {
            digits.append(hexDigits[Int(byte >> 4)])
            digits.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// `1301,1302`: four lower-case hex digits per value, comma-separated, as bytes to hash.
    private static func hexList(_ values: [UInt16]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(values.count * 5)
        for value in values {
            if !text.isEmpty { text.append(UInt8(ascii: ",")) }
            for shift in [12, 8, 4, 0] as [UInt16] {
                text.append(hexDigits[Int(value >> shift & 0x0F)])
            }
        }
        return text
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
