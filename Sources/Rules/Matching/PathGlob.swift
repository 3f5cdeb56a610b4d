import ProxyCore

/// A glob over a URL path (`/api/*`, `/v?/users`, `*.json`): `*` matches any run of characters,
/// `/` included, `?` exactly one byte; everything else matches itself, case-sensitively (paths
/// are). The whole path must match. The matching is ProxyCore's `HostMatching.globMatches`,
/// the same byte walk host globs use.
public struct PathGlob: Sendable, Hashable {
    public let pattern: String
    /// The pattern's bytes (what `globMatches` walks).
    let bytes: [UInt8]
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
        var path = path
        return path.withUTF8 { pathBytes in
            bytes.withUnsafeBufferPointer { HostMatching.globMatches(pathBytes, pattern: $0) }
        }
    }

    /// What the trailing `*` of a `literal*` pattern matched in `path` (`/api/*` on
    /// `/api/users/1` → `users/1`); nil for other patterns or a path that does not match.
    public func remainder(of path: Substring) -> Substring? {
        guard let literalPrefix, path.hasPrefix(literalPrefix) else { return nil }
        return path.dropFirst(literalPrefix.count)
    }
}
