import LinearRegex
import ProxyCore

/// The facts of one request that rules match on. `host` is in `HostName.normalized` form (the
/// engine normalizes once per request); `pathAndQuery` is the request-target's path and query
/// as sent (`/search?q=1`).
public struct RequestFacts: Sendable {
    public let scheme: String
    public let host: String
    public let port: Int
    public let method: String
    public let pathAndQuery: String
    /// The path without the query, as sent (map-remote keeps it).
    public let path: Substring
    /// The path as path conditions match it (`MatchedPath`: `/%61dmin`, `//admin` and
    /// `/./admin` are `/admin`), and with the query: what `path_regex` searches.
    public let matchedPath: Substring
    public let matchedPathAndQuery: Substring
    /// `scheme` and `method` as bits (`RuleFilter`), worked out once per request.
    let schemeBit: UInt8
    let methodBit: UInt16
    /// The path's first bytes, and the host's first and last byte, for `RuleFilter`.
    let pathHead: PackedPrefix
    let hostFirst: UInt8
    let hostLast: UInt8

    public init(scheme: String, host: String, port: Int, method: String, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.method = method
        self.pathAndQuery = pathAndQuery
        if let question = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = pathAndQuery[..<question]
        } else {
            path = pathAndQuery[...]
        }
        matchedPath = MatchedPath.normalized(path)
        if matchedPath.endIndex == path.endIndex && matchedPath.startIndex == path.startIndex {
            matchedPathAndQuery = pathAndQuery[...]  // nothing to normalize (the common case)
        } else {
            matchedPathAndQuery = Substring(String(matchedPath) + pathAndQuery[path.endIndex...])
        }
        schemeBit = RuleFilter.schemeBit(scheme)
        methodBit = RuleFilter.methodBit(method)
        pathHead = PackedPrefix(of: matchedPath)
        hostFirst = host.utf8.first ?? 0
        hostLast = host.utf8.last ?? 0
    }
}

/// Which requests a rule applies to: every condition given must hold.
/// `RuleSet` checks it in a compiled form (`RuleFilter`, then its `CompiledRule`), built once
/// per rules file, so the per-request walk copies none of these values.
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

    /// Whether the match can be decided from a CONNECT alone (host and port): no method or path
    /// condition, and no scheme other than https.
    public var decidableAtConnect: Bool {
        methods == nil && path == nil && (schemes == nil || schemes!.contains("https"))
    }
}

/// A condition on the request's path: a glob over the path alone, or a regular expression
/// (RE2, case-sensitive, linear in the path's length) searched in the path and query.
public enum PathCondition: Sendable {
    case glob(PathGlob)
    case regex(LinearRegex)

    public func matches(_ request: RequestFacts) -> Bool {
        switch self {
        case .glob(let glob):
            return glob.matches(request.matchedPath)
        case .regex(let regex):
            var text = request.matchedPathAndQuery
            return text.withUTF8 { regex.matches(utf8: $0) }
        }
    }

    public var description: String {
        switch self {
        case .glob(let glob): return "path \(glob.pattern)"
        case .regex(let regex): return "path_regex \(regex.pattern)"
        }
    }
}
