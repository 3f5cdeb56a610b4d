import Foundation
import ProxyCore

/// The facts of one request that rules match on. `host` is in `HostName.normalized` form (the
/// engine normalizes once per request); `pathAndQuery` is the request-target's path and query
/// as sent (`/search?q=1`).
public struct RequestFacts: Sendable {
    public var scheme: String
    public var host: String
    public var port: Int
    public var method: String
    public var pathAndQuery: String

    public init(scheme: String, host: String, port: Int, method: String, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.method = method
        self.pathAndQuery = pathAndQuery
    }

    /// The path without the query.
    public var path: Substring {
        if let question = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) {
            return pathAndQuery[..<question]
        }
        return pathAndQuery[...]
    }
}

/// Which requests a rule applies to: every condition given must hold.
public struct RuleMatch: Sendable {
    /// Host patterns (`*`, `example.com`, `*.example.com`, globs); any one matching is enough.
    public var hosts: HostPatternList
    public var port: Int?
    /// Lower-case schemes (`http`, `https`); nil: any.
    public var schemes: Set<String>?
    /// Upper-case methods; nil: any.
    public var methods: Set<String>?
    public var path: PathCondition?

    public init(hosts: HostPatternList, port: Int? = nil, schemes: Set<String>? = nil, methods: Set<String>? = nil,
                path: PathCondition? = nil) {
        self.hosts = hosts
        self.port = port
        self.schemes = schemes
        self.methods = methods
        self.path = path
    }

    /// Whether the request matches; the host is checked last (the index already chose this
    /// rule by host, mostly).
    public func matches(_ request: RequestFacts) -> Bool {
        if let port, port != request.port { return false }
        if let schemes, !schemes.contains(request.scheme) { return false }
        if let methods, !methods.contains(request.method) { return false }
        if let path, !path.matches(request) { return false }
        return hosts.matches(normalizedHost: request.host)
    }

    /// Whether the match can be decided from a CONNECT alone (host and port): no method or path
    /// condition, and no scheme other than https.
    public var decidableAtConnect: Bool {
        methods == nil && path == nil && (schemes == nil || schemes!.contains("https"))
    }
}

/// A condition on the request's path: a glob over the path alone, or a regular expression
/// searched in the path and query.
public enum PathCondition: @unchecked Sendable {
    case glob(PathGlob)
    /// `NSRegularExpression` is immutable and documented thread-safe for matching.
    case regex(NSRegularExpression, source: String)

    public func matches(_ request: RequestFacts) -> Bool {
        switch self {
        case .glob(let glob):
            return glob.matches(request.path)
        case .regex(let regex, _):
            let text = request.pathAndQuery
            return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
    }

    public var description: String {
        switch self {
        case .glob(let glob): return "path \(glob.pattern)"
        case .regex(_, let source): return "path_regex \(source)"
        }
    }
}
