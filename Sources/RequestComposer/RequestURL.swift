/// The absolute URL of a composed request, checked and normalized once for both front ends.
///
/// Only `http` and `https`; a host (a name, an IPv4 address or a bracketed IPv6 literal) and an
/// optional port 1–65535; the path (`/` when none was written) and query kept as written, since
/// the person may mean odd bytes. Non-ASCII is percent-encoded as UTF-8 (as browsers send it), the
/// fragment is dropped (it never goes on the wire), and spaces or control characters are refused.
/// No globbing: `[]` and `{}` in a path or query are plain characters.
struct RequestURL {
    /// `scheme://host[:port]/path?query`.
    let text: String
    /// `user:password` written before the host, still percent-encoded; nil when absent.
    let userInfo: Substring?

    /// Parses `input`; the error is a message in words (the caller adds where it came from).
    static func parse(_ input: String) -> Result<RequestURL, URLProblem> {
        guard let separator = input.range(of: "://") else {
            return .failure(URLProblem("'\(HTTPSyntax.shown(input))' is not an absolute URL: write it as https://host/path"))
        }
        let scheme = input[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            return .failure(URLProblem("the URL scheme '\(HTTPSyntax.shown(scheme))' is not supported: use an http:// or https:// URL"))
        }
        let rest = input[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var userInfo: Substring?
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }
        let hostPort: String
        switch checkAuthority(authority) {
        case .success(let value): hostPort = value
        case .failure(let problem): return .failure(problem)
        }
        var target = rest[authorityEnd...]
        if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
        var path = target.first == "/" ? "" : "/"
        for byte in target.utf8 {
            if byte <= 0x20 || byte == 0x7F {
                let what = byte == 0x20 ? "a space" : HTTPSyntax.controlName(in: String(decoding: [byte], as: UTF8.self))
                return .failure(URLProblem("the URL holds \(what): percent-encode it (%20 for a space)"))
            }
            if byte >= 0x80 {
                path += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            } else {
                path.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return .success(RequestURL(text: scheme + "://" + hostPort + path, userInfo: userInfo))
    }

    /// Checks an origin given for origin-form request lines (`https://example.com`, a trailing `/`
    /// allowed) and returns it without the trailing `/`.
    static func parseOrigin(_ input: String) -> Result<String, URLProblem> {
        switch parse(input) {
        case .failure(let problem): return .failure(problem)
        case .success(let url):
            let schemeEnd = url.text.range(of: "://")!.upperBound
            guard let slash = url.text[schemeEnd...].firstIndex(of: "/"), url.text[slash...] == "/", url.userInfo == nil else {
                return .failure(URLProblem("the origin '\(HTTPSyntax.shown(input))' must be scheme://host[:port] alone, without a path, query or user"))
            }
            return .success(String(url.text[..<slash]))
        }
    }

    private static func checkAuthority(_ authority: Substring) -> Result<String, URLProblem> {
        var host = authority
        var port: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(URLProblem("the URL's IPv6 address has no closing ']'"))
            }
            host = authority[...close]
            let inside = authority[authority.index(after: authority.startIndex)..<close]
            guard !inside.isEmpty, inside.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                return .failure(URLProblem("the URL's IPv6 address '\(HTTPSyntax.shown(host))' is not valid"))
            }
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return .failure(URLProblem("the URL has text after its IPv6 address: write [address]:port")) }
                port = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { return .failure(URLProblem("the URL has no host: write it as https://host/path")) }
        if host.first != "[" {
            guard host.utf8.allSatisfy(isHostByte) else {
                return .failure(URLProblem("the URL's host '\(HTTPSyntax.shown(host))' has characters a host name cannot have"))
            }
        }
        guard let port else { return .success(String(host)) }
        guard !port.isEmpty, port.count <= 5, port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(port),
              (1...65535).contains(number) else {
            return .failure(URLProblem("the URL's port '\(HTTPSyntax.shown(port))' is not a number from 1 to 65535"))
        }
        return .success("\(host):\(number)")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// RFC 3986 reg-name: unreserved, sub-delims and `%` of percent-encoding.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~%!$&'()*+,;=".utf8.contains(byte)
        }
    }
}

/// Why a URL was refused, in words.
struct URLProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
