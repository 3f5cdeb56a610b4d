/// A host wildcard as people write it in a rule (`match: host: "*.example.com"`), an
/// SSL-proxying include/exclude list or a pin key: the one host matcher of the project, so that
/// the same text means the same hosts everywhere.
///
/// Four forms, decided once when the pattern is parsed (see `Kind`):
/// - `*` matches every host;
/// - `example.com`, `127.0.0.1`, `::1`, `[::1]` match exactly that host;
/// - `*.example.com` matches its subdomains at any depth (`a.example.com`, `a.b.example.com`),
///   neither `example.com` itself nor `badexample.com`;
/// - anything else with `*` or `?` is an anchored glob over the whole host: `*` is any run of
///   characters (dots included), `?` exactly one (`api-*.example.com`, `*.example.*`).
///
/// Both sides go through `HostName.normalized`, so case, one trailing dot, IDN spelling
/// (`bücher.example` = `xn--bcher-kva.example`) and IP literal spelling (`0:0::1` = `::1`) make
/// no difference. Invalid patterns are refused at `init` with a `HostPatternError` whose message
/// names the problem and the fix.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// What a pattern matches; every string is in `HostName.normalized` form.
    public enum Kind: Sendable, Hashable {
        /// `*`: every host.
        case any
        /// A name or an IP address in canonical text: that host only.
        case exact(String)
        /// `*.suffix`: hosts ending in `.suffix`, one label deep or more.
        case subdomains(of: String)
        /// Any other pattern with `*` or `?`, matched against the whole host.
        case glob(String)
    }

    /// The pattern as written (for messages and round trips into configuration).
    public let text: String
    /// The parsed, normalized pattern.
    public let kind: Kind
    /// `kind` again, taken apart for `matches`: switching on a payload-free tag and reading a
    /// stored string costs no copy of the enum's payload (this runs per rule per request).
    private let tag: Tag
    private let value: String

    private enum Tag: Sendable, Hashable { case any, exact, subdomains, glob }

    /// Parses and validates `text`; see `HostPatternError` for what is refused.
    public init(_ text: String) throws(HostPatternError) {
        self.text = text
        let kind = try HostPatternParser.kind(of: text)
        self.kind = kind
        switch kind {
        case .any: (tag, value) = (.any, "")
        case .exact(let name): (tag, value) = (.exact, name)
        case .subdomains(of: let suffix): (tag, value) = (.subdomains, suffix)
        case .glob(let pattern): (tag, value) = (.glob, pattern)
        }
    }

    public var description: String { text }

    /// Whether `host`, already in `HostName.normalized` form, matches. Called per request: it
    /// compares bytes and does not allocate.
    public func matches(normalizedHost host: String) -> Bool {
        switch tag {
        case .any:
            return true
        case .exact:
            return host == value
        case .subdomains:
            return HostMatching.isSubdomain(host, of: value)
        case .glob:
            return HostMatching.globMatches(host, pattern: value)
        }
    }

    /// Whether `host`, as received or configured, matches (it is normalized first).
    public func matches(host: some StringProtocol) -> Bool {
        matches(normalizedHost: HostName.normalized(host))
    }
}

/// Several host patterns where any one matching is enough: the shape of the SSL-proxying
/// include and exclude lists.
public struct HostPatternList: Sendable, Hashable {
    /// The patterns, in the order given.
    public let patterns: [HostPattern]

    public init(_ patterns: [HostPattern] = []) {
        self.patterns = patterns
    }

    /// Parses each text; the first invalid one throws (its message quotes that pattern).
    public init(parsing texts: some Sequence<String>) throws(HostPatternError) {
        var patterns: [HostPattern] = []
        for text in texts {
            patterns.append(try HostPattern(text))
        }
        self.patterns = patterns
    }

    /// True when the list holds no pattern (and so matches nothing).
    public var isEmpty: Bool { patterns.isEmpty }

    /// Whether any pattern matches `host`, already in `HostName.normalized` form.
    public func matches(normalizedHost host: String) -> Bool {
        for pattern in patterns where pattern.matches(normalizedHost: host) {
            return true
        }
        return false
    }

    /// Whether any pattern matches `host`, as received or configured (normalized once).
    public func matches(host: some StringProtocol) -> Bool {
        matches(normalizedHost: HostName.normalized(host))
    }
}
