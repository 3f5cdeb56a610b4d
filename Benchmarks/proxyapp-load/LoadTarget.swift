import NIOCore

/// The URL under load, taken apart once: where to connect, what to say in CONNECT and Host,
/// and whether the host is an IP address (then no SNI is sent and the certificate must carry
/// it as an IP address).
struct LoadTarget: Equatable {
    enum Scheme: String {
        case http, https
    }

    let scheme: Scheme
    /// Without brackets for IPv6.
    let host: String
    let port: Int
    /// Origin-form request target: the path and query, "/" at least.
    let path: String

    /// `host:port`, IPv6 in brackets: the CONNECT target, and the Host header.
    var authority: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    var hostIsIPAddress: Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

extension LoadTarget {
    /// Parses `http://HOST[:PORT][/PATH]` or `https://…`; nil names no problem, the caller does.
    init?(url: String) {
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("http://") {
            scheme = .http
            rest = url.dropFirst("http://".count)
        } else if lowered.hasPrefix("https://") {
            scheme = .https
            rest = url.dropFirst("https://".count)
        } else {
            return nil
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let endpoint = HostAndPort(rest[..<authorityEnd], defaultPort: scheme == .https ? 443 : 80) else {
            return nil
        }
        host = endpoint.host
        port = endpoint.port
        var path = rest[authorityEnd...]
        if let fragment = path.firstIndex(of: "#") { path = path[..<fragment] }
        self.path = path.first == "/" ? String(path) : "/" + path
    }
}

/// `HOST:PORT` (IPv6 in brackets), as in a URL's authority or `--proxy`.
struct HostAndPort: Equatable {
    let host: String
    let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Without `:PORT`, `defaultPort` applies; nil without it. Refuses user info (`@`).
    init?(_ text: Substring, defaultPort: Int?) {
        guard !text.contains("@") else { return nil }
        let hostPart: Substring
        var portPart: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                portPart = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        } else {
            hostPart = text
        }
        guard !hostPart.isEmpty, !hostPart.contains(" ") else { return nil }
        if let portPart {
            guard let port = Int(portPart), (1...65535).contains(port) else { return nil }
            self.port = port
        } else {
            guard let defaultPort else { return nil }
            self.port = defaultPort
        }
        host = String(hostPart)
    }
}
