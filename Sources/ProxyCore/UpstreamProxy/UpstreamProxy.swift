import Foundation

/// Another proxy that ProxyApp's own upstream connections go through (`--upstream-proxy`, the
/// `upstream_proxy` rule): a corporate HTTP proxy, a SOCKS5 server, Tor.
///
/// - `http://[user:pass@]host:port`: TLS and tunnels through `CONNECT`; plain HTTP requests in
///   absolute form on a connection to the proxy (as browsers talk to it), with
///   `Proxy-Authorization: Basic` when a login is given.
/// - `socks5://`: SOCKS5 (RFC 1928, login RFC 1929); ProxyApp resolves the destination and asks
///   for its address.
/// - `socks5h://`: the same, but the proxy resolves the name (Tor, networks whose names only the
///   proxy knows).
///
/// Its `description` never holds the password: it names the proxy in failures, flows and logs.
public struct UpstreamProxy: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case http
        case socks5
        case socks5h
    }

    public var scheme: Scheme
    /// A host name (lower-case) or an IP literal (IPv6 without brackets).
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?

    public init(scheme: Scheme, host: String, port: Int, user: String? = nil, password: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.user = user
        self.password = password
    }

    /// Whether the proxy, not ProxyApp, resolves destination names.
    public var resolvesNames: Bool { scheme != .socks5 }

    /// `scheme://[user@]host:port`, without the password.
    public var description: String {
        let login = user.map { "\($0)@" } ?? ""
        let address = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(login)\(address):\(port)"
    }

    /// This proxy's URL with a login placeholder, for messages that ask for one.
    public var loginExample: String {
        "\(scheme.rawValue)://USER:PASS@" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// `Proxy-Authorization` for an HTTP proxy with a login.
    public var basicAuthorization: String? {
        guard let user, let password else { return nil }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Why a text is not an upstream proxy URL, in words that name the fix.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Reads `http://[user:pass@]host:port`, `socks5://…` or `socks5h://…`. The user name and
    /// password may be percent-encoded (`p%40ss` for `p@ss`).
    public static func parse(_ text: String) -> Result<UpstreamProxy, ParseError> {
        func failure(_ reason: String) -> Result<UpstreamProxy, ParseError> { .failure(ParseError(reason: reason)) }
        // Quoted back without its login: a message must not show the password.
        var shown = String(text.prefix(200))
        if let separator = shown.range(of: "://"), let at = shown.lastIndex(of: "@"), at > separator.upperBound {
            shown = shown[..<separator.upperBound] + "…" + shown[at...]
        }
        shown = String(shown.prefix(80))
        guard let separator = text.range(of: "://") else {
            return failure("'\(shown)' has no scheme: write http://HOST:PORT, socks5://HOST:PORT or socks5h://HOST:PORT")
        }
        let schemeText = text[..<separator.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            if schemeText == "https" {
                return failure("TLS to the upstream proxy (https://) is not supported: write http://HOST:PORT "
                               + "(HTTPS requests still go through it encrypted, with CONNECT)")
            }
            if schemeText == "socks" || schemeText == "socks4" || schemeText == "socks4a" {
                return failure("'\(schemeText)://' is not supported: write socks5:// (ProxyApp resolves names) "
                               + "or socks5h:// (the proxy resolves them)")
            }
            return failure("unknown scheme '\(schemeText.prefix(20))://': write http://, socks5:// or socks5h://")
        }
        var rest = text[separator.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            return failure("'\(shown)' has a path: an upstream proxy URL is only \(scheme.rawValue)://[USER:PASS@]HOST:PORT")
        }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let login = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = login.firstIndex(of: ":") else {
                return failure("the login in '\(scheme.rawValue)://…@' has no password: write USER:PASS@")
            }
            guard let name = String(login[..<colon]).removingPercentEncoding,
                  let secret = String(login[login.index(after: colon)...]).removingPercentEncoding else {
                return failure("the login in the upstream proxy URL has a malformed %-escape")
            }
            switch ProxyCredentials.parseEntry(name + ":" + secret) {
            case .success(let entry):
                user = entry.user
                password = entry.password
            case .failure(let error):
                return failure("upstream proxy login: \(error.reason)")
            }
        }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                return failure("'\(shown)': an IPv6 address needs its closing ']'")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { return failure("'\(shown)' has no port: write \(scheme.rawValue)://[ADDRESS]:PORT") }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                return failure("'\(shown)' has no port: write \(scheme.rawValue)://\(rest.prefix(60)):PORT")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            return failure("'\(portText.prefix(20))' is not a port (1-65535) in '\(shown)'")
        }
        let normalized = HostName.normalized(host)
        guard !normalized.isEmpty, HostName.isIPAddress(normalized) || DNSHostName.isValid(normalized) else {
            return failure("'\(host.prefix(60))' is not a host name or IP address")
        }
        return .success(UpstreamProxy(scheme: scheme, host: normalized, port: port, user: user, password: password))
    }
}
