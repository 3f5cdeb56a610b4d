import ProxyCore

/// A rule that acted, with its action unpacked.
public struct AppliedRule<Action: Sendable>: Sendable {
    public let name: String
    public let action: Action
    /// The rule's path condition: map-local directories and map-remote paths keep what a
    /// trailing `*` matched.
    public let path: PathCondition?
}

/// What the rules say about one HTTP request: for each kind, the first enabled rule that
/// matches, if any. DNS overrides are asked separately (`dnsOverride`), for the host the
/// request finally goes to.
public struct RequestPlan: Sendable {
    public var block: AppliedRule<BlockAction>?
    public var mapLocal: AppliedRule<MapLocalAction>?
    public var mapRemote: AppliedRule<MapRemoteAction>?
    public var rewrite: AppliedRule<RewriteAction>?

    public init() {}

    public var isEmpty: Bool { block == nil && mapLocal == nil && mapRemote == nil && rewrite == nil }
}

/// One loaded rules file: the rules in file order and the SSL-proxying lists, plus indexes
/// that find the rules a host can match without looking at every rule.
///
/// Immutable, and a class so that handing the set to a request costs one reference: a reload
/// builds a new set and swaps it in (`LiveRules`); a request keeps the set it started with.
public final class RuleSet: Sendable {
    public let rules: [Rule]
    public let sslProxying: SSLProxyingLists
    /// The file it came from; nil for an empty set or one built in code.
    public let source: String?
    /// The rules as the per-request walk reads them (a class each: reading one costs a single
    /// reference, not a copy of every field).
    private let compiled: [CompiledRule]
    /// Block, map_local, map_remote and rewrite rules: asked for every request.
    private let requestIndex: RuleIndex
    /// Dns rules: asked for every upstream connection.
    private let dnsIndex: RuleIndex

    public init(rules: [Rule] = [], sslProxying: SSLProxyingLists = SSLProxyingLists(), source: String? = nil) {
        self.rules = rules
        self.sslProxying = sslProxying
        self.source = source
        self.compiled = rules.map(CompiledRule.init)
        self.requestIndex = RuleIndex(rules) { $0.kind != .dns }
        self.dnsIndex = RuleIndex(rules) { $0.kind == .dns }
    }

    public static let empty = RuleSet()

    /// No enabled rule and the default SSL-proxying lists: requests need no lookup at all.
    public var isInert: Bool { requestIndex.isEmpty && dnsIndex.isEmpty && sslProxying.isDefault }

    public var enabledCount: Int { rules.lazy.filter(\.enabled).count }

    /// The plan for an HTTP request (plain, or decrypted inside a tunnel).
    public func plan(for request: RequestFacts) -> RequestPlan {
        var plan = RequestPlan()
        if requestIndex.isEmpty { return plan }
        requestIndex.forEachCandidate(host: request.host) { position in
            let rule = compiled[position]
            // The kind first: the action's payload is only unpacked for a rule that matched.
            switch rule.kind {
            case .block:
                if plan.block == nil, rule.match.matches(request), case .block(let action) = rule.action {
                    plan.block = AppliedRule(name: rule.name, action: action, path: rule.match.path)
                }
            case .mapLocal:
                if plan.mapLocal == nil, rule.match.matches(request), case .mapLocal(let action) = rule.action {
                    plan.mapLocal = AppliedRule(name: rule.name, action: action, path: rule.match.path)
                }
            case .mapRemote:
                if plan.mapRemote == nil, rule.match.matches(request), case .mapRemote(let action) = rule.action {
                    plan.mapRemote = AppliedRule(name: rule.name, action: action, path: rule.match.path)
                }
            case .rewrite:
                if plan.rewrite == nil, rule.match.matches(request), case .rewrite(let action) = rule.action {
                    plan.rewrite = AppliedRule(name: rule.name, action: action, path: rule.match.path)
                }
            case .dns:
                break
            }
            return plan.block == nil || plan.mapLocal == nil || plan.mapRemote == nil || plan.rewrite == nil
        }
        return plan
    }

    /// The block rule that refuses a CONNECT to `host`:`port` (normalized host): the first
    /// block rule whose match needs nothing but the host and port.
    public func blockingConnect(host: String, port: Int) -> AppliedRule<BlockAction>? {
        if requestIndex.isEmpty { return nil }
        var found: AppliedRule<BlockAction>?
        requestIndex.forEachCandidate(host: host) { position in
            let rule = compiled[position]
            if case .block(let action) = rule.action, rule.match.decidableAtConnect,
               rule.match.port.map({ $0 == port }) ?? true, rule.match.hosts.matches(normalizedHost: host) {
                found = AppliedRule(name: rule.name, action: action, path: nil)
                return false
            }
            return true
        }
        return found
    }

    /// The DNS override for connections to `host`:`port` (normalized host), if a dns rule
    /// matches; dns rules match on host and port only (the loader refuses anything else).
    public func dnsOverride(host: String, port: Int) -> AppliedRule<DNSOverride>? {
        if dnsIndex.isEmpty { return nil }
        var found: AppliedRule<DNSOverride>?
        dnsIndex.forEachCandidate(host: host) { position in
            let rule = compiled[position]
            if case .dns(let override) = rule.action, rule.match.port.map({ $0 == port }) ?? true,
               rule.match.hosts.matches(normalizedHost: host) {
                found = AppliedRule(name: rule.name, action: override, path: nil)
                return false
            }
            return true
        }
        return found
    }
}

/// A rule as the per-request walk holds it.
private final class CompiledRule: Sendable {
    let name: String
    let kind: RuleKind
    let match: RuleMatch
    let action: RuleAction

    init(_ rule: Rule) {
        name = rule.name
        kind = rule.kind
        match = rule.match
        action = rule.action
    }
}
