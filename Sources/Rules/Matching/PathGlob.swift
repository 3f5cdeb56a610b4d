/// A glob over a URL path (`/api/*`, `/v?/users`, `*.json`): `*` matches any run of characters,
/// `/` included, `?` exactly one; everything else matches itself, case-sensitively (paths are).
/// The whole path must match.
///
/// Matching walks bytes with one backtrack point (the last `*`), so it is linear in practice
/// and never recursive.
public struct PathGlob: Sendable, Hashable {
    public let pattern: String
    private let bytes: [UInt8]
    /// For a pattern that is a literal followed by one trailing `*` (`/api/*`): the literal.
    /// Map-local directories and map-remote paths replace it and keep what the `*` matched.
    public let literalPrefix: String?

    public init(_ pattern: String) {
        self.pattern = pattern
        self.bytes = Array(pattern.utf8)
        let wildcards = bytes.filter { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
        if wildcards == [UInt8(ascii: "*")], bytes.last == UInt8(ascii: "*") {
            literalPrefix = String(decoding: bytes.dropLast(), as: UTF8.self)
        } else {
            literalPrefix = nil
        }
    }

    public func matches(_ path: Substring) -> Bool {
        let star = UInt8(ascii: "*"), question = UInt8(ascii: "?")
        let text = path.utf8
        var p = 0
        var t = text.startIndex
        var starPattern = -1
        var starText = text.startIndex
        while t != text.endIndex {
            if p < bytes.count, bytes[p] == star {
                starPattern = p
                p += 1
                starText = t
            } else if p < bytes.count, bytes[p] == question || bytes[p] == text[t] {
                p += 1
                t = text.index(after: t)
            } else if starPattern >= 0 {
                p = starPattern + 1
                starText = text.index(after: starText)
                t = starText
            } else {
                return false
            }
        }
        while p < bytes.count, bytes[p] == star { p += 1 }
        return p == bytes.count
    }

    /// What the trailing `*` of a `literal*` pattern matched in `path` (`/api/*` on
    /// `/api/users/1` → `users/1`); nil for other patterns or a path that does not match.
    public func remainder(of path: Substring) -> Substring? {
        guard let literalPrefix, path.hasPrefix(literalPrefix) else { return nil }
        return path.dropFirst(literalPrefix.count)
    }
}
