import ProxyModel

/// The path rules match on: the request's path as an origin reads it, so that spelling it
/// differently cannot slip past a rule. `/%61dmin`, `/./admin`, `//admin` and `/x/../admin` all
/// match `path: /admin*` (origins decode, resolve and merge them: RFC 3986 §6.2.2.2 and §5.2.4,
/// nginx's `merge_slashes`).
///
/// Only percent-encoded *unreserved* characters are decoded (`%2F` stays, it is not a `/` to an
/// origin), dot segments are removed and runs of `/` become one; case is kept (paths are
/// case-sensitive). The request is forwarded as sent: this is for matching only.
public enum MatchedPath {
    /// `path` as rules match it; `path` itself (no copy) when nothing in it needs normalizing,
    /// which one byte scan decides.
    public static func normalized(_ path: Substring) -> Substring {
        guard path.utf8.first == UInt8(ascii: "/"), needsWork(path.utf8) else { return path }
        return Substring(normalize(decodingUnreserved(path.utf8)))
    }

    private static func needsWork(_ bytes: Substring.UTF8View) -> Bool {
        var previousSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "%") { return true }
            if previousSlash && (byte == UInt8(ascii: "/") || byte == UInt8(ascii: ".")) { return true }
            previousSlash = byte == UInt8(ascii: "/")
        }
        return false
    }

    /// `%XX` for an unreserved character (letters, digits, `-._~`) replaced by it; every other
    /// byte, and every other escape, kept as it is.
    static func decodingUnreserved(_ bytes: Substring.UTF8View) -> [UInt8] {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
               let high = PercentDecoding.hexValue(input[index + 1]), let low = PercentDecoding.hexValue(input[index + 2]),
               isUnreserved(high << 4 | low) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(input[index])
                index += 1
            }
        }
        return output
    }

    /// Dot segments removed and empty segments dropped; a trailing `/` (or a final `.`/`..`
    /// segment) keeps the path ending in `/`.
    static func normalize(_ bytes: [UInt8]) -> String {
        var segments: [ArraySlice<UInt8>] = []
        let parts = bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var trailingSlash = false
        for (position, part) in parts.enumerated() {
            let isLast = position == parts.count - 1
            if part.isEmpty || part.elementsEqual([UInt8(ascii: ".")]) {
                trailingSlash = isLast
            } else if part.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                _ = segments.popLast()
                trailingSlash = isLast
            } else {
                segments.append(part)
                trailingSlash = false
            }
        }
        var output: [UInt8] = [UInt8(ascii: "/")]
        for (position, segment) in segments.enumerated() {
            if position > 0 { output.append(UInt8(ascii: "/")) }
            output.append(contentsOf: segment)
        }
        if trailingSlash && !segments.isEmpty { output.append(UInt8(ascii: "/")) }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
