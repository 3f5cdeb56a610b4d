/// Where a request sent to the proxy wants to go, decided from its method and request-target
/// (RFC 9112 §3.2) before any I/O happens.
///
/// A forward proxy sees three shapes: absolute-form (`GET http://host/path`, a proxy request),
/// authority-form (`CONNECT host:443`, a tunnel) and origin-form (`GET /`, a request for the
/// proxy itself, which answers with its own pages).
public enum RequestTarget: Sendable, Hashable {
    /// `scheme://host[:port]/path?query` — forward to the origin.
    case absolute(scheme: String, host: String, port: Int, pathAndQuery: String)
    /// `host:port` of a CONNECT request — open a tunnel.
    case authority(host: String, port: Int)
    /// `/path?query` — a request addressed to the proxy itself.
    case origin(pathAndQuery: String)

    /// Classifies a request-target.
    ///
    /// - Throws: `RequestTargetError` with a one-line reason the client can be shown.
    public static func parse(method: String, uri: String) throws(RequestTargetError) -> RequestTarget {
        if method == "CONNECT" {
            let (host, port) = try parseAuthority(Substring(uri), defaultPort: nil)
            return .authority(host: host, port: port)
        }
        if uri.hasPrefix("/") {
            return .origin(pathAndQuery: uri)
        }
        if uri == "*" {
            return .origin(pathAndQuery: "*")
        }
        guard let schemeEnd = Self.schemeSeparator(in: uri) else {
            throw .invalid("request target '\(uri.prefix(200))' is neither an absolute URL nor a path")
        }
        let scheme = String(uri[..<schemeEnd.lowerBound]).asciiLowercased
        let defaultPort: Int
        switch scheme {
        case "http", "ws": defaultPort = 80
        case "https", "wss": defaultPort = 443
        default: throw .invalid("unsupported URL scheme '\(scheme.prefix(40))'")
        }
        let rest = uri[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {  // userinfo is not forwarded (RFC 9110 §4.2.4)
            authority = authority[authority.index(after: at)...]
        }
        let (host, port) = try parseAuthority(authority, defaultPort: defaultPort)
        var pathAndQuery = rest[authorityEnd...]
        if let hash = pathAndQuery.firstIndex(of: "#") {
            pathAndQuery = pathAndQuery[..<hash]
        }
        let path: String
        if pathAndQuery.isEmpty {
            path = "/"
        } else if pathAndQuery.first == "?" {
            path = "/" + pathAndQuery
        } else {
            path = String(pathAndQuery)
        }
        return .absolute(scheme: scheme, host: host, port: port, pathAndQuery: path)
    }

    /// Splits `host[:port]` or `[v6]:port`. The host comes back lowercased, without brackets.
    static func parseAuthority(
        _ authority: Substring, defaultPort: Int?
    ) throws(RequestTargetError) -> (host: String, port: Int) {
        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else {
                throw .invalid("unterminated IPv6 literal in '\(authority.prefix(200))'")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.first == ":" {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalid("unexpected text after IPv6 literal in '\(authority.prefix(200))'")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else {
            throw .invalid("missing host in '\(authority.prefix(200))'")
        }
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw .invalid("invalid host '\(host.prefix(200))'")
        }
        let port: Int
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw .invalid("invalid port '\(portText.prefix(20))'")
            }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw .invalid("CONNECT target '\(authority.prefix(200))' needs a port (host:port)")
        }
        return (String(host).asciiLowercased, port)
    }

    /// The range of the first `://`, found on UTF-8 bytes (Foundation's `range(of:)` was a
    /// measurable share of a request's cost).
    private static func schemeSeparator(in uri: String) -> Range<String.Index>? {
        let utf8 = uri.utf8
        var index = utf8.startIndex
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: ":") {
                let slash1 = utf8.index(after: index)
                if slash1 != utf8.endIndex, utf8[slash1] == UInt8(ascii: "/") {
                    let slash2 = utf8.index(after: slash1)
                    if slash2 != utf8.endIndex, utf8[slash2] == UInt8(ascii: "/") {
                        return index..<utf8.index(after: slash2)
                    }
                }
                return nil  // a scheme ends at its first colon
            }
            index = utf8.index(after: index)
        }
        return nil
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
