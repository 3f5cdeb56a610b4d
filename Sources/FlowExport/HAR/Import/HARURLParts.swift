/// A HAR request URL split into the parts a `Flow` stores: scheme, host (IPv6 without
/// brackets), port (the scheme's default when absent) and path with query (fragment dropped).
///
/// Hand-parsed rather than through `URLComponents`, whose handling of IPv6 hosts and of
/// characters browsers leave unescaped differs between platforms; the path is kept exactly as
/// written so a re-export or a curl command sends the same bytes.
struct HARURLParts: Equatable {
    var scheme: String
    var host: String
    var port: Int
    var path: String

    /// Schemes Chrome's exporter keeps (its HTTP filter) and what a Flow records for them:
    /// a WebSocket handshake is an HTTP request to the same URL.
    private static let schemes: [String: (flowScheme: String, port: Int)] = [
        "http": ("http", 80), "https": ("https", 443), "ws": ("http", 80), "wss": ("https", 443),
    ]

    enum Failure: Error, Equatable {
        case notAURL
        case unsupportedScheme(String)
        case badPort(String)
    }

    /// `http://host:8080/path?q=1#frag`. With `authorityOnly` (CONNECT) also `host:443`, which
    /// is then an `https` tunnel target unless the port is 80.
    static func parse(_ url: String, authorityOnly: Bool = false) throws(Failure) -> HARURLParts {
        guard let separator = url.range(of: "://") else {
            guard authorityOnly else { throw .notAURL }
            let (host, port) = try authority(Substring(url), defaultPort: nil)
            return HARURLParts(scheme: port == 80 ? "http" : "https", host: host, port: port, path: "")
        }
        let givenScheme = url[..<separator.lowerBound].lowercased()
        guard let known = schemes[givenScheme] else {
            if givenScheme.isEmpty || !givenScheme.allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }) {
                throw .notAURL
            }
            throw .unsupportedScheme(givenScheme)
        }
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let (host, port) = try authority(rest[..<authorityEnd], defaultPort: known.port)
        var path = String(rest[authorityEnd...])
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        return HARURLParts(scheme: known.flowScheme, host: host, port: port, path: authorityOnly ? "" : path)
    }

    /// `user@host:port`, `[::1]:8080`, `example.com` → host without brackets and the port.
    private static func authority(_ text: Substring, defaultPort: Int?) throws(Failure) -> (String, Int) {
        var hostPort = text
        if let at = hostPort.lastIndex(of: "@") { hostPort = hostPort[hostPort.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw .notAURL }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .notAURL }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = hostPort
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else { throw .notAURL }
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (1...65_535).contains(port) else {
                throw .badPort(String(portText))
            }
            return (String(host), port)
        }
        guard let defaultPort else { throw .badPort("") }
        return (String(host), defaultPort)
    }
}
