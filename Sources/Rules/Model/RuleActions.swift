import Foundation
import LinearRegex
import ProxyCore

/// `block`: answer the request from the proxy (403 by default) without contacting the origin;
/// a CONNECT to a blocked host is refused.
public struct BlockAction: Sendable {
    public var status: Int
    /// The response body; nil: a one-line text naming the rule.
    public var body: String?
    public var headers: [(name: String, value: String)]

    public init(status: Int = 403, body: String? = nil, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

/// `map_local`: answer from a local file, or from a directory with the URL path appended.
public struct MapLocalAction: Sendable {
    public enum Source: Sendable, Hashable {
        /// An absolute path to a regular file.
        case file(String)
        /// An absolute path to a directory; the request's path picks the file.
        case directory(String)
    }

    public var source: Source
    public var status: Int
    /// Overrides the type guessed from the file's extension.
    public var contentType: String?
    public var headers: [(name: String, value: String)]

    public init(source: Source, status: Int = 200, contentType: String? = nil,
                headers: [(name: String, value: String)] = []) {
        self.source = source
        self.status = status
        self.contentType = contentType
        self.headers = headers
    }
}

/// `map_remote`: send the request to another scheme, host, port and maybe path.
public struct MapRemoteAction: Sendable {
    public var destination: RemoteDestination
    /// Keep the client's `Host` header instead of naming the new host.
    public var preserveHost: Bool

    public init(destination: RemoteDestination, preserveHost: Bool = false) {
        self.destination = destination
        self.preserveHost = preserveHost
    }
}

/// `dns`: connect to these addresses instead of what the host resolves to; the request keeps
/// its `Host` header and TLS its SNI, so the origin sees the original name.
public struct DNSOverride: Sendable, Hashable {
    /// IP literals in canonical form, tried in order.
    public var addresses: [String]

    public init(addresses: [String]) {
        self.addresses = addresses
    }
}

/// `upstream_proxy`: send the matching requests (and tunnels, when the match needs nothing but
/// host and port) through this upstream proxy, or straight to the origin (`direct: true`),
/// whatever `--upstream-proxy` and `--upstream-bypass` say.
public enum UpstreamProxyAction: Sendable, Hashable {
    case direct
    case proxy(UpstreamProxy)

    /// The proxy to go through; nil: direct.
    public var proxy: UpstreamProxy? {
        if case .proxy(let proxy) = self { return proxy }
        return nil
    }
}

/// `rewrite`: edit request and response headers, replace the status, replace text in bodies.
public struct RewriteAction: Sendable {
    public var requestHeaders: HeaderEdits
    public var responseHeaders: HeaderEdits
    public var status: Int?
    public var requestBody: [TextReplacement]
    public var responseBody: [TextReplacement]

    public init(requestHeaders: HeaderEdits = HeaderEdits(), responseHeaders: HeaderEdits = HeaderEdits(),
                status: Int? = nil, requestBody: [TextReplacement] = [], responseBody: [TextReplacement] = []) {
        self.requestHeaders = requestHeaders
        self.responseHeaders = responseHeaders
        self.status = status
        self.requestBody = requestBody
        self.responseBody = responseBody
    }
}

/// Header edits, applied in this order: remove, set (replace every value of the name, or add
/// it), add (append another value).
public struct HeaderEdits: Sendable {
    /// Names to remove (any case).
    public var remove: [String]
    public var set: [(name: String, value: String)]
    public var add: [(name: String, value: String)]

    public init(remove: [String] = [], set: [(name: String, value: String)] = [],
                add: [(name: String, value: String)] = []) {
        self.remove = remove
        self.set = set
        self.add = add
    }

    public var isEmpty: Bool { remove.isEmpty && set.isEmpty && add.isEmpty }
}

/// One text replacement in a body: a literal string, or a regular expression (RE2, linear in the
/// body's length) with a `$1`-style template; every occurrence.
public struct TextReplacement: Sendable {
    public enum Pattern: Sendable {
        case literal(String)
        case regex(LinearRegex)
    }

    public let pattern: Pattern
    /// The replacement as written (for a regex, a `ReplacementTemplate`'s text).
    public let replacement: String
    /// `replacement` parsed against the regex's groups; nil for a literal.
    let template: ReplacementTemplate?

    /// - Throws: `LinearRegexError` (about `replacement`) when it names a group the regex lacks.
    public init(pattern: Pattern, replacement: String) throws(LinearRegexError) {
        self.pattern = pattern
        self.replacement = replacement
        if case .regex(let regex) = pattern {
            template = try ReplacementTemplate(replacement, groupCount: regex.groupCount)
        } else {
            template = nil
        }
    }

    public func apply(to text: String) -> String {
        (try? apply(to: text, shouldContinue: { true })) ?? text
    }

    /// `apply`, asking `shouldContinue` between the matches of a regex (a regex over a body can
    /// cost more than linear time in all: see `LinearRegex.replacingMatches`).
    /// - Throws: `ReplacementStopped` when it said no.
    public func apply(to text: String, shouldContinue: () -> Bool) throws(ReplacementStopped) -> String {
        switch pattern {
        case .literal(let find):
            return text.replacingOccurrences(of: find, with: replacement)
        case .regex(let regex):
            guard let template else { return text }
            return try regex.replacingMatches(in: text, with: template, shouldContinue: shouldContinue)
        }
    }
}
