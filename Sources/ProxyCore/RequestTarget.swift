/// Where a request sent to the proxy wants to go, decided from its method and request-target
/// (RFC 9112 §3.2) before any I/O happens.
///
/// A forward proxy sees three shapes: absolute-form (`GET http://host/path`, a proxy request),
/// authority-form (`CONNECT host:443`, a tunnel) and origin-form (`GET /`, a request for the
/// proxy itself, which answers with its own pages).
///
/// The words for where things go, from the client to the origin: a `RequestTarget` is the
/// request line's form as parsed; the *requested destination* (`ExchangeDriver.RequestedDestination`)
/// is where the client asked to go — inside a CONNECT tunnel, its `TunnelDestination`; the
/// *upstream destination* (`UpstreamDestination`) is where the rules send it (a map_remote
/// rule's `RemoteDestination`, a dns rule's addresses), reached over TLS with `UpstreamTLSSettings`.
public enum RequestTarget: Sendable, Hashable {
    /// `scheme://host[:port]/path?query` — forward to the origin.
    case absolute(scheme: String, host: String, port: Int, pathAndQuery: String)
    /// `host:port` of a CONNECT request — open a tunnel.
    case authority(host: String, port: Int)
    /// `/path?query` — a request addressed to the proxy itself.
    case origin(pathAndQuery: String)

    /// Classifies a request-target.
    ///
    /// Works on UTF-8 bytes: String's Character-level slicing (grapheme breaking, index rounding)
    /// was a visible share of a request's cost.
    ///
    /// - Throws: `RequestTargetError` with a one-line reason the client can be shown.
    public static func parse(method: String, uri: String) throws(RequestTargetError) -> RequestTarget {
        let bytes = uri.utf8
        if method == "CONNECT" {
            if bytes.contains(UInt8(ascii: "@")) {
                throw .invalid("CONNECT target '\(uri.prefix(200))' must be host:port, without user information")
            }
            let (host, port) = try parseAuthority(bytes[...], defaultPort: nil)
            return .authority(host: host, port: port)
        }
        if bytes.first == UInt8(ascii: "/") || uri == "*" {
            return .origin(pathAndQuery: uri)
        }
        guard let separator = schemeSeparator(in: bytes) else {
            throw .invalid("request target '\(uri.prefix(200))' is neither an absolute URL nor a path")
        }
        let scheme = String(Substring(bytes[..<separator.lowerBound])).asciiLowercased
        let defaultPort: Int
        switch scheme {
        case "http", "ws": defaultPort = 80
        case "https", "wss": defaultPort = 443
        default: throw .invalid("unsupported URL scheme '\(scheme.prefix(40))'")
        }
        let rest = bytes[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {  // userinfo is not forwarded (RFC 9110 §4.2.4)
            authority = authority[authority.index(after: at)...]
        }
        let (host, port) = try parseAuthority(authority, defaultPort: defaultPort)
        var pathAndQuery = rest[authorityEnd...]
        if let hash = pathAndQuery.firstIndex(of: UInt8(ascii: "#")) {
            pathAndQuery = pathAndQuery[..<hash]
        }
        let path: String
        if pathAndQuery.isEmpty {
            path = "/"
        } else if pathAndQuery.first == UInt8(ascii: "?") {
            path = "/" + Substring(pathAndQuery)
        } else {
            path = String(Substring(pathAndQuery))
        }
        return .absolute(scheme: scheme, host: host, port: port, pathAndQuery: path)
    }

    /// Splits `host[:port]` or `[v6]:port`. The host comes back in `HostName.normalized` form,
    /// without brackets, or is refused (`RequestTargetHost`).
    static func parseAuthority(
        _ authority: Substring.UTF8View, defaultPort: Int?
    ) throws(RequestTargetError) -> (host: String, port: Int) {
        var host: Substring.UTF8View
        var portText: Substring.UTF8View?
        let bracketed = authority.first == UInt8(ascii: "[")
        if bracketed {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw .invalid("unterminated IPv6 literal in '\(Substring(authority).prefix(200))'")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.first == UInt8(ascii: ":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalid("unexpected text after IPv6 literal in '\(Substring(authority).prefix(200))'")
            }
        } else if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else {
            throw .invalid("missing host in '\(Substring(authority).prefix(200))'")
        }
        let canonicalHost = try RequestTargetHost.canonical(host, bracketed: bracketed)
        let port: Int
        if let portText {
            guard let value = Self.decimal(portText), (1...65535).contains(value) else {
                throw .invalid("invalid port '\(Substring(portText).prefix(20))'")
            }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw .invalid("CONNECT target '\(Substring(authority).prefix(200))' needs a port (host:port)")
        }
        return (canonicalHost, port)
    }

    /// A short run of ASCII digits as a number; nil for anything else.
    private static func decimal(_ digits: Substring.UTF8View) -> Int? {
        guard !digits.isEmpty, digits.count <= 5 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The range of the first `://`; nil when the scheme (up to the first colon) is not
    /// followed by `//`.
    private static func schemeSeparator(in bytes: String.UTF8View) -> Range<String.Index>? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let slash1 = bytes.index(after: colon)
        guard slash1 != bytes.endIndex, bytes[slash1] == UInt8(ascii: "/") else { return nil }
        let slash2 = bytes.index(after: slash1)
        guard slash2 != bytes.endIndex, bytes[slash2] == UInt8(ascii: "/") else { return nil }
        return colon..<bytes.index(after: slash2)
    }
}

/// Why a request-target could not be used; the text is shown to the client in a 400 answer.
public enum RequestTargetError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalid(String)

    public var description: String {
        switch self {
        case .invalid(let reason): return reason
        }
    }
}
