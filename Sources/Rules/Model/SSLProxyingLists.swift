import ProxyCore

/// Which CONNECT hosts are decrypted (the file's `ssl_proxying:` section): a tunnel is
/// decrypted when its CONNECT host or its TLS server name is included and neither is
/// excluded. Without the section every host is included and none excluded.
public struct SSLProxyingLists: Sendable {
    /// nil: everything is included (no `include:` written).
    public var include: HostPatternList?
    public var exclude: HostPatternList

    public init(include: HostPatternList? = nil, exclude: HostPatternList = HostPatternList([])) {
        self.include = include
        self.exclude = exclude
    }

    public var isDefault: Bool { include == nil && exclude.patterns.isEmpty }

    /// Whether a tunnel to `connectHost` whose ClientHello named `serverName` is decrypted;
    /// both in `HostName.normalized` form.
    public func decrypts(connectHost: String, serverName: String?) -> Bool {
        if isDefault { return true }
        if exclude.matches(normalizedHost: connectHost) { return false }
        if let serverName, exclude.matches(normalizedHost: serverName) { return false }
        guard let include else { return true }
        if include.matches(normalizedHost: connectHost) { return true }
        if let serverName, include.matches(normalizedHost: serverName) { return true }
        return false
    }
}
