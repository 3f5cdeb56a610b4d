/// The byte-level matching behind `HostPattern`, apart from parsing so each piece is small and
/// can be read (and tested) on its own. The rules engine calls the buffer forms directly on
/// its per-request path (and matches path globs with the same `globMatches`).
///
/// Hosts are normalized ASCII (an IPv6 zone aside), so a byte is a character here. Nothing in
/// this type allocates for native strings: the bytes are read in place.
public enum HostMatching {
    /// Whether `host` ends in `.` + `suffix` with at least one character before that dot:
    /// `a.example.com` and `a.b.example.com` are subdomains of `example.com`; `example.com`
    /// and `badexample.com` are not.
    public static func isSubdomain(_ host: String, of suffix: String) -> Bool {
        let hostBytes = host.utf8
        let suffixBytes = suffix.utf8
        let suffixCount = suffixBytes.count
        guard hostBytes.count >= suffixCount + 2 else { return false }
        let suffixStart = hostBytes.index(hostBytes.endIndex, offsetBy: -suffixCount)
        guard hostBytes[hostBytes.index(before: suffixStart)] == UInt8(ascii: ".") else { return false }
        return hostBytes[suffixStart...].elementsEqual(suffixBytes)
    }

    /// Whether the whole of `host` matches `pattern`, where `*` stands for any run of bytes
    /// (dots included, possibly none) and `?` for exactly one byte.
    public static func globMatches(_ host: String, pattern: String) -> Bool {
        withBytes(host) { hostBytes in
            withBytes(pattern) { patternBytes in
                globMatches(hostBytes, pattern: patternBytes)
            }
        }
    }

    /// The iterative wildcard match: on a mismatch, go back to the last `*` and let it swallow
    /// one more byte. Only the last star is ever revisited (an earlier one could only re-create
    /// a state already tried), so the cost is O(host × pattern) at worst, with no recursion.
    public static func globMatches(_ host: UnsafeBufferPointer<UInt8>, pattern: UnsafeBufferPointer<UInt8>) -> Bool {
        let star = UInt8(ascii: "*")
        let question = UInt8(ascii: "?")
        var h = 0
        var p = 0
        var lastStar = -1          // index of the last `*` seen in the pattern
        var resumeHost = 0         // host index that `*` has swallowed up to
        while h < host.count {
            if p < pattern.count, pattern[p] == star {
                lastStar = p
                resumeHost = h
                p += 1
            } else if p < pattern.count, pattern[p] == question || pattern[p] == host[h] {
                h += 1
                p += 1
            } else if lastStar >= 0 {
                resumeHost += 1
                h = resumeHost
                p = lastStar + 1
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    /// `isSubdomain` over bytes.
    public static func isSubdomain(_ host: UnsafeBufferPointer<UInt8>, of suffix: UnsafeBufferPointer<UInt8>) -> Bool {
        guard host.count >= suffix.count + 2, host[host.count - suffix.count - 1] == UInt8(ascii: ".") else { return false }
        return UnsafeBufferPointer(rebasing: host[(host.count - suffix.count)...]).elementsEqual(suffix)
    }

    /// Runs `body` over the UTF-8 bytes of `string`, in place for native strings (small ones
    /// are copied to the stack by the standard library); a copy only for bridged strings.
    private static func withBytes<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}
