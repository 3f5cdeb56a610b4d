/// Opens a tunnel to a destination through an upstream proxy, without I/O: bytes to send out,
/// bytes received in, until the tunnel is open or the proxy said why not.
///
/// - HTTP proxy: `CONNECT host:port` (with `Proxy-Authorization: Basic` when the proxy URL has a
///   login); any 2xx opens the tunnel, anything else is a failure quoting the status line.
/// - SOCKS5 (RFC 1928): greeting offering no-login (and username/password, RFC 1929, when a
///   login is given), the login, then `CONNECT` to an IPv4/IPv6 address or a domain name.
///
/// Bytes after the proxy's answer belong to the destination and come back as `leftover`.
/// Answers are read with a size bound, so an endless or garbage answer fails instead of growing.
public struct UpstreamProxyHandshake: Sendable {
    public enum Step: Sendable, Equatable {
        /// Write these bytes, then keep reading.
        case send([UInt8])
        /// Nothing to do until more bytes arrive.
        case needMore
        /// The tunnel is open; `leftover` came from the destination.
        case established(leftover: [UInt8])
        /// The proxy refused or did not speak its protocol: why, in words.
        case failed(String)
    }

    private enum Phase: Sendable {
        case httpAwaitingHead
        case socksAwaitingMethod
        case socksAwaitingLogin
        case socksAwaitingReply
        case done
    }

    /// Longest answer head read from an HTTP proxy.
    static let maximumHTTPHeadBytes = 16 * 1024

    public let proxy: UpstreamProxy
    public let host: String
    public let port: Int
    private var phase: Phase
    private var buffer: [UInt8] = []

    /// `host` is what the proxy is asked for: an IP literal or a name (a SOCKS5 proxy gets a name
    /// as such; resolve first for `socks5://`).
    public init(proxy: UpstreamProxy, host: String, port: Int) {
        self.proxy = proxy
        self.host = host
        self.port = port
        self.phase = proxy.scheme == .http ? .httpAwaitingHead : .socksAwaitingMethod
    }

    /// `host:port` as the CONNECT names it (IPv6 in brackets).
    public var target: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The first bytes to send.
    public func start() -> [UInt8] {
        switch proxy.scheme {
        case .http:
            var head = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
            if let authorization = proxy.basicAuthorization { head += "Proxy-Authorization: \(authorization)\r\n" }
            return Array((head + "\r\n").utf8)
        case .socks5, .socks5h:
            return proxy.user == nil ? [5, 1, 0] : [5, 2, 0, 2]
        }
    }

    /// Takes bytes the proxy sent.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> Step {
        guard case .done = phase else {
            buffer.append(contentsOf: bytes)
            return advance()
        }
        return .needMore
    }

    private mutating func advance() -> Step {
        switch phase {
        case .httpAwaitingHead: return readHTTPHead()
        case .socksAwaitingMethod: return readMethod()
        case .socksAwaitingLogin: return readLoginStatus()
        case .socksAwaitingReply: return readReply()
        case .done: return .needMore
        }
    }

    private mutating func fail(_ reason: String) -> Step {
        phase = .done
        buffer = []
        return .failed(reason)
    }

    // MARK: HTTP CONNECT

    private mutating func readHTTPHead() -> Step {
        guard let end = Self.headEnd(in: buffer) else {
            if buffer.count > Self.maximumHTTPHeadBytes {
                return fail("answered CONNECT \(target) with a header section over 16 KiB")
            }
            return .needMore
        }
        let lineEnd = buffer.firstIndex(of: UInt8(ascii: "\r")) ?? end
        let statusLine = buffer[..<lineEnd]
        let parts = statusLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)),
              parts[1].count == 3, let status = Int(String(decoding: parts[1], as: UTF8.self)) else {
            return fail("did not answer CONNECT as an HTTP proxy (it sent '\(Self.printable(statusLine))')")
        }
        let leftover = Array(buffer[(end + 4)...])
        let phrase = parts.count > 2 ? " " + Self.printable(parts[2]) : ""
        switch status {
        case 200..<300:
            phase = .done
            buffer = []
            return .established(leftover: leftover)
        case 407:
            return fail(proxy.user == nil
                ? "asks for a login (407\(phrase)): give it in the URL, \(proxy.loginExample)"
                : "refused the login for user '\(proxy.user!)' (407\(phrase))")
        default:
            return fail("answered CONNECT \(target) with \(status)\(phrase)")
        }
    }

    /// Where `\r\n\r\n` starts.
    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Bytes from the proxy for a message: printable ASCII, at most 80 characters.
    static func printable(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.prefix(80).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    // MARK: SOCKS5

    private mutating func readMethod() -> Step {
        guard buffer.count >= 2 else { return .needMore }
        guard buffer[0] == 5 else { return fail("did not answer as a SOCKS5 server") }
        let method = buffer[1]
        buffer.removeFirst(2)
        switch method {
        case 0:
            return sendConnect()
        case 2 where proxy.user != nil:
            phase = .socksAwaitingLogin
            let user = Array(proxy.user!.utf8), password = Array((proxy.password ?? "").utf8)
            return .send([1, UInt8(user.count)] + user + [UInt8(password.count)] + password)
        case 2:
            return fail("asks for a login: give it in the URL, \(proxy.loginExample)")
        case 0xFF:
            return fail(proxy.user == nil
                ? "accepts none of the login methods offered: give a login in the URL, "
                    + "\(proxy.loginExample)"
                : "accepts neither no login nor a user name and password")
        default:
            return fail("chose a login method not offered (\(method))")
        }
    }

    private mutating func readLoginStatus() -> Step {
        guard buffer.count >= 2 else { return .needMore }
        let status = buffer[1]
        buffer.removeFirst(2)
        guard status == 0 else { return fail("refused the login for user '\(proxy.user ?? "")'") }
        return sendConnect()
    }

    private mutating func sendConnect() -> Step {
        phase = .socksAwaitingReply
        var request: [UInt8] = [5, 1, 0]
        if let address = IPAddressBytes(host) {
            request += address.bytes.count == 4 ? [1] : [4]
            request += address.bytes
        } else {
            let name = Array(host.utf8)
            // One length byte: a longer name is no DNS name, and cut short it would be another.
            guard (1...255).contains(name.count) else { return fail("cannot be asked for a name of \(name.count) bytes") }
            request += [3, UInt8(name.count)] + name
        }
        request += [UInt8(port >> 8), UInt8(port & 0xFF)]
        return .send(request)
    }

    private mutating func readReply() -> Step {
        guard buffer.count >= 5 else { return .needMore }
        guard buffer[0] == 5 else { return fail("did not answer CONNECT as a SOCKS5 server") }
        let code = buffer[1]
        if code != 0 { return fail("could not open \(target): \(Self.socksReplyText(code))") }
        let addressLength: Int
        switch buffer[3] {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3: addressLength = 1 + Int(buffer[4])
        default: return fail("answered CONNECT with an unknown address type (\(buffer[3]))")
        }
        let length = 4 + addressLength + 2
        guard buffer.count >= length else { return .needMore }
        let leftover = Array(buffer[length...])
        phase = .done
        buffer = []
        return .established(leftover: leftover)
    }

    /// RFC 1928 §6's reply codes, in words.
    static func socksReplyText(_ code: UInt8) -> String {
        switch code {
        case 1: return "general SOCKS server failure"
        case 2: return "connection not allowed by its rules"
        case 3: return "network unreachable"
        case 4: return "host unreachable"
        case 5: return "connection refused"
        case 6: return "timed out (TTL expired)"
        case 7: return "command not supported"
        case 8: return "address type not supported"
        default: return "failure code \(code)"
        }
    }
}
