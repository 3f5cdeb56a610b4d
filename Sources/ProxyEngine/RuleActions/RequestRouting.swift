import NIOHTTP1
import ProxyCore
import Rules

/// A request as the client sent it, in the parts routing needs.
struct ClientRequest {
    var head: HTTPRequestHead
    var scheme: String
    var host: String
    var port: Int
    var pathAndQuery: String
    /// The `Host` the upstream request gets when no rule changes it: the client's own inside a
    /// tunnel (virtual hosts), else the URL's authority.
    var authority: String
    /// How the request's body is framed upstream, decided before any rule saw it.
    var framing: RequestFraming.Decision
}

/// Where a forwarded request goes after the rules, and what they do on the way. The flow still
/// records the request as the client sent it.
struct UpstreamDestination {
    var scheme: String
    var host: String
    var port: Int
    var pathAndQuery: String
    /// The upstream request's `Host`.
    var authority: String
    /// Connect here instead of resolving `host` (a dns rule).
    var addresses: [String]?
    /// Go through this upstream proxy (`UpstreamProxySettings`); nil: direct.
    var upstreamProxy: UpstreamProxy?
    var rewrite: AppliedRule<RewriteAction>?
    /// The slow network to imitate (a throttle rule, else `--throttle`); nil: none.
    var throttle: ThrottleProfile?
    /// Names of the rules that act on the exchange, in the order they act.
    var appliedRules: [String] = []
    var notes: [String] = []
}

/// What the proxy does with one HTTP request under a rule set: answer it itself (block,
/// map-local) or forward it, maybe elsewhere (map-remote), to other addresses (dns), with
/// edits (rewrite). Pure: no I/O, so every precedence question is a unit test.
enum RequestRouting {
    /// What a flow's rules say when `--throttle` (not a rule) slowed it.
    static let globalThrottleName = "--throttle"

    enum Decision {
        case block(AppliedRule<BlockAction>)
        case mapLocal(AppliedRule<MapLocalAction>, facts: RequestFacts)
        case forward(UpstreamDestination)
    }

    static func decide(_ request: ClientRequest, rules: RuleSet,
                       upstream: UpstreamProxySettings = UpstreamProxySettings(), throttle: ThrottleProfile? = nil) -> Decision {
        var target = UpstreamDestination(scheme: request.scheme, host: request.host, port: request.port,
                                    pathAndQuery: request.pathAndQuery, authority: request.authority)
        if let throttle {
            target.throttle = throttle
            target.appliedRules.append(Self.globalThrottleName)
        }
        if rules.isInert {
            if upstream.proxy != nil {
                target.upstreamProxy = upstream.proxy(forHost: HostName.normalized(request.host), rule: nil)
                if let proxy = target.upstreamProxy { target.notes.append(UpstreamProxySettings.note(proxy)) }
            }
            return .forward(target)
        }
        let facts = RequestFacts(scheme: request.scheme, host: HostName.normalized(request.host), port: request.port,
                                 method: request.head.method.rawValue, pathAndQuery: request.pathAndQuery)
        let plan = rules.plan(for: facts)
        if let block = plan.block { return .block(block) }
        if let mapLocal = plan.mapLocal { return .mapLocal(mapLocal, facts: facts) }
        var upstreamHost = facts.host
        if let remote = plan.mapRemote {
            let destination = remote.action.destination
            target.scheme = destination.scheme
            target.host = destination.host
            target.port = destination.port
            target.pathAndQuery = destination.pathAndQuery(for: facts, matchedBy: remote.path)
            if !remote.action.preserveHost {
                target.authority = destination.authority
            }
            upstreamHost = destination.host
            target.appliedRules.append(remote.name)
            target.notes.append("map_remote: sent to \(destination.scheme)://\(destination.authority)\(target.pathAndQuery)")
        }
        if let dns = rules.dnsOverride(host: upstreamHost, port: target.port) {
            target.addresses = dns.action.addresses
            target.appliedRules.append(dns.name)
        }
        if let rewrite = plan.rewrite {
            target.rewrite = rewrite
            target.appliedRules.append(rewrite.name)
        }
        if let rule = plan.throttle {
            target.throttle = rule.action.isNone ? nil : rule.action  // `throttle: off`
            target.appliedRules.removeAll { $0 == Self.globalThrottleName }
            target.appliedRules.append(rule.name)
        }
        let route = plan.upstreamProxy
        target.upstreamProxy = upstream.proxy(forHost: upstreamHost, rule: route?.action)
        if let route { target.appliedRules.append(route.name) }
        if let proxy = target.upstreamProxy { target.notes.append(UpstreamProxySettings.note(proxy)) }
        return .forward(target)
    }
}
