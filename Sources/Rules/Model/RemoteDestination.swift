import ProxyCore

/// Where a `map_remote` rule sends requests: `scheme://host[:port][/path][?query]`, parsed
/// once at load.
///
/// Without a path the request keeps its own path and query. With a path, the destination's
/// path is a prefix: a rule without a path condition appends the whole request path
/// (`to: http://x/v2` sends `/users` to `/v2/users`), a rule whose `path` is `literal*` appends
/// what the `*` matched (`/api/*` → `to: http://x/v2/` sends `/api/users` to `/v2/users`), and a
/// rule with any other path condition (an exact path, a regex) sends its requests to exactly
/// that path. The request's query is kept unless the destination has one.
public struct RemoteDestination: Sendable, Hashable {
    public var scheme: String
    /// Normalized (`HostName.normalized`), IPv6 without brackets.
    public var host: String
    public var port: Int
    public var path: String?
    public var query: String?

    public init(scheme: String, host: String, port: Int, path: String? = nil, query: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// Parses `to:`; the error text says what is wrong (the caller adds where).
    public init(parsing text: String) throws(RuleValueError) {
        guard let schemeEnd = text.range(of: "://") else {
            throw RuleValueError("'\(text)' is not a URL: write scheme://host[:port][/path], e.g. http://127.0.0.1:3000")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw RuleValueError("'\(text)': the scheme must be http or https, not '\(scheme)'")
        }
        var rest = text[schemeEnd.upperBound...]
        var pathAndQuery: Substring = ""
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
            pathAndQuery = rest[slash...]
            rest = rest[..<slash]
        }
        if rest.contains("#") || pathAndQuery.contains("#") {
            throw RuleValueError("'\(text)': a destination has no #fragment; remove it")
        }
        if rest.contains("@") {
            throw RuleValueError("'\(text)': credentials in the URL are not supported; use a rewrite rule to set Authorization")
        }
        var hostText = rest
        var port = scheme == "https" ? 443 : 80
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw RuleValueError("'\(text)': the IPv6 address has no closing ']'")
            }
            hostText = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RuleValueError("'\(text)': unexpected '\(after)' after the host") }
                port = try Self.port(after.dropFirst(), in: text)
            }
        } else if let colon = rest.lastIndex(of: ":") {
            hostText = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...], in: text)
        }
        guard !hostText.isEmpty else { throw RuleValueError("'\(text)': the host is missing") }
        do {
            _ = try HostPattern(String(hostText))
        } catch {
            throw RuleValueError("'\(text)': \(error.message)")
        }
        if hostText.contains("*") || hostText.contains("?") {
            throw RuleValueError("'\(text)': a destination host cannot hold wildcards")
        }
        self.scheme = scheme
        self.host = HostName.normalized(hostText)
        self.port = port
        if let question = pathAndQuery.firstIndex(of: "?") {
            let path = pathAndQuery[..<question]
            self.path = path.isEmpty ? nil : String(path)
            self.query = String(pathAndQuery[pathAndQuery.index(after: question)...])
        } else {
            self.path = pathAndQuery.isEmpty ? nil : String(pathAndQuery)
            self.query = nil
        }
    }

    private static func port(_ text: Substring, in url: String) throws(RuleValueError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw RuleValueError("'\(url)': the port must be a number from 1 to 65535, not '\(text)'")
        }
        return port
    }

    /// The destination's authority for a `Host` header (default ports left out).
    public var authority: String {
        let hostPart = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    /// The URL as a user reads it.
    public var url: String {
        "\(scheme)://\(authority)\(path ?? "")\(query.map { "?\($0)" } ?? "")"
    }

    /// The path and query to request at the destination for `request`.
    public func pathAndQuery(for request: RequestFacts, matchedBy condition: PathCondition?) -> String {
        let requestPath = request.path
        guard let path else {
            // No path: the request's own, with the destination's query if it has one.
            guard let query else { return request.pathAndQuery }
            return "\(requestPath)?\(query)"
        }
        let originalQuery: Substring? = requestPath.endIndex < request.pathAndQuery.endIndex
            ? request.pathAndQuery[request.pathAndQuery.index(after: requestPath.endIndex)...] : nil
        var newPath = path
        var remainder: Substring?
        switch condition {
        case nil:
            remainder = requestPath
        case .glob(let glob)?:
            remainder = glob.remainder(of: requestPath)
        case .regex?:
            remainder = nil
        }
        if let remainder, !remainder.isEmpty {
            // Exactly one slash where the two meet (`/v2` + `users`, `/v2/` + `/users`).
            switch (newPath.hasSuffix("/"), remainder.hasPrefix("/")) {
            case (true, true): newPath += remainder.dropFirst()
            case (false, false): newPath += "/" + remainder
            default: newPath += remainder
            }
        }
        if let query { return "\(newPath)?\(query)" }
        if let originalQuery { return "\(newPath)?\(originalQuery)" }
        return newPath
    }
}

/// A value in the rules file that cannot be used; the text says why and what to write instead.
public struct RuleValueError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
