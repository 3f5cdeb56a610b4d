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
///
/// It holds the rules themselves (one reference each) and unpacks an action only when asked:
/// the walk that fills it runs for every request.
public struct RequestPlan: Sendable {
    fileprivate var blockRule: CompiledRule?
    fileprivate var mapLocalRule: CompiledRule?
    fileprivate var mapRemoteRule: CompiledRule?
    fileprivate var rewriteRule: CompiledRule?
    fileprivate var upstreamProxyRule: CompiledRule?
    fileprivate var throttleRule: CompiledRule?

    public init() {}

    public var isEmpty: Bool {
        blockRule == nil && mapLocalRule == nil && mapRemoteRule == nil && rewriteRule == nil && upstreamProxyRule == nil
            && throttleRule == nil
    }

    fileprivate var isComplete: Bool {
        blockRule != nil && mapLocalRule != nil && mapRemoteRule != nil && rewriteRule != nil && upstreamProxyRule != nil
            && throttleRule != nil
    }

    public var throttle: AppliedRule<ThrottleProfile>? {
        guard let rule = throttleRule, case .throttle(let profile) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: profile, path: rule.match.path)
    }

    public var upstreamProxy: AppliedRule<UpstreamProxyAction>? {
        guard let rule = upstreamProxyRule, case .upstreamProxy(let action) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: action, path: rule.match.path)
    }

    public var block: AppliedRule<BlockAction>? {
        guard let rule = blockRule, case .block(let action) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: action, path: rule.match.path)
    }

    public var mapLocal: AppliedRule<MapLocalAction>? {
        guard let rule = mapLocalRule, case .mapLocal(let action) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: action, path: rule.match.path)
    }

    public var mapRemote: AppliedRule<MapRemoteAction>? {
        guard let rule = mapRemoteRule, case .mapRemote(let action) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: action, path: rule.match.path)
    }

    public var rewrite: AppliedRule<RewriteAction>? {
        guard let rule = rewriteRule, case .rewrite(let action) = rule.action else { return nil }
        return AppliedRule(name: rule.name, action: action, path: rule.match.path)
    }
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
    /// Each rule's port, scheme and method conditions as plain values, by position.
    private let filters: [RuleFilter]
    /// Block, map_local, map_remote and rewrite rules: asked for every request.
    private let requestIndex: RuleIndex
    /// Dns rules: asked for every upstream connection.
    private let dnsIndex: RuleIndex

    public init(rules: [Rule] = [], sslProxying: SSLProxyingLists = SSLProxyingLists(), source: String? = nil) {
        self.rules = rules
        self.sslProxying = sslProxying
        self.source = source
        self.compiled = rules.map(CompiledRule.init)
        self.filters = rules.map { RuleFilter($0.match) }
        self.requestIndex = RuleIndex(rules) { $0.kind != .dns }
        self.dnsIndex = RuleIndex(rules) { $0.kind == .dns }
    }

    public static let empty = RuleSet()

    /// No enabled rule and the default SSL-proxying lists: requests need no lookup at all.
    public var isInert: Bool { requestIndex.isEmpty && dnsIndex.isEmpty && sslProxying.isDefault }

    public var enabledCount: Int { rules.lazy.filter(\.enabled).count }

    /// What the TUI header says of the enabled `throttle` rules that slow something (`throttle:
    /// off` exemptions do not): nil for none, `rule NAME` for one, `N rules` for more.
    public var throttleSummary: String? {
        let slowing = rules.filter { rule in
            guard rule.enabled, case .throttle(let profile) = rule.action else { return false }
            return !profile.isNone
        }
        switch slowing.count {
        case 0: return nil
        case 1: return "rule \(slowing[0].name)"
        default: return "\(slowing.count) rules"
        }
    }

    /// The plan for an HTTP request (plain, or decrypted inside a tunnel).
    public func plan(for request: RequestFacts) -> RequestPlan {
        var plan = RequestPlan()
        if requestIndex.isEmpty { return plan }
        var host = request.host
        var path = request.matchedPath
        host.withUTF8 { hostBytes in
            path.withUTF8 { pathBytes in
                var walk = requestIndex.candidates(host: request.host)
                while let (position, hostKnown) = walk.next() {
                    // Numbers first (no reference touched), then the kind, then path and host.
                    guard filters[position].admits(request) else { continue }
                    let rule = compiled[position]
                    // The first matching rule of its kind takes the kind's slot.
                    func take(_ slot: inout CompiledRule?) {
                        if slot == nil, rule.matchesBeyondFilter(request, host: hostBytes, path: pathBytes, hostKnown: hostKnown) {
                            slot = rule
                        }
                    }
                    switch rule.kind {
                    case .block: take(&plan.blockRule)
                    case .mapLocal: take(&plan.mapLocalRule)
                    case .mapRemote: take(&plan.mapRemoteRule)
                    case .rewrite: take(&plan.rewriteRule)
                    case .upstreamProxy: take(&plan.upstreamProxyRule)
                    case .throttle: take(&plan.throttleRule)
                    case .dns: break
                    }
                    if plan.isComplete { break }
                }
            }
        }
        return plan
    }

    /// The block rule that refuses a CONNECT to `host`:`port` (normalized host): the first
    /// block rule whose match needs nothing but the host and port.
    public func blockingConnect(host: String, port: Int) -> AppliedRule<BlockAction>? {
        firstDecidedAtConnect(host: host, port: port) { action in
            if case .block(let block) = action { return block }
            return nil
        }
    }

    /// The upstream_proxy rule for a tunnel to `host`:`port` (normalized host): the first whose
    /// match needs nothing but the host and port.
    public func upstreamProxyForConnect(host: String, port: Int) -> AppliedRule<UpstreamProxyAction>? {
        firstDecidedAtConnect(host: host, port: port) { action in
            if case .upstreamProxy(let route) = action { return route }
            return nil
        }
    }

    /// The throttle rule for a tunnel to `host`:`port` (normalized host): the first whose match
    /// needs nothing but the host and port.
    public func throttleForConnect(host: String, port: Int) -> AppliedRule<ThrottleProfile>? {
        firstDecidedAtConnect(host: host, port: port) { action in
            if case .throttle(let profile) = action { return profile }
            return nil
        }
    }

    /// The first enabled rule whose action `extract` takes and whose match a CONNECT to
    /// `host`:`port` decides alone.
    private func firstDecidedAtConnect<Action>(host: String, port: Int,
                                               _ extract: (RuleAction) -> Action?) -> AppliedRule<Action>? {
        if requestIndex.isEmpty { return nil }
        var found: AppliedRule<Action>?
        requestIndex.forEachCandidate(host: host) { position in
            let rule = compiled[position]
            if let action = extract(rule.action), rule.match.decidableAtConnect,
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
///
/// Its path and host conditions are kept as flat byte arrays (trivial elements), matched over
/// buffers of the request's bytes: checking a candidate then copies no struct of references
/// (each such copy is a retain and a release per field, and the walk sees dozens of candidates
/// per request).
fileprivate final class CompiledRule: Sendable {
    let name: String
    let kind: RuleKind
    let match: RuleMatch
    let action: RuleAction
    private let methods: Set<String>?
    /// Per host pattern: its kind (0 any, 1 exact, 2 subdomains, 3 glob) and where its bytes
    /// start in `hostBytes` (one more entry marks the end).
    private let hostKinds: [UInt8]
    private let hostStarts: [Int]
    private let hostBytes: [UInt8]
    private let pathGlob: [UInt8]?
    private let pathRegex: PathCondition?

    init(_ rule: Rule) {
        name = rule.name
        kind = rule.kind
        match = rule.match
        action = rule.action
        methods = rule.match.methods
        var kinds: [UInt8] = [], starts: [Int] = [], bytes: [UInt8] = []
        for pattern in rule.match.hosts.patterns {
            starts.append(bytes.count)
            switch pattern.kind {
            case .any: kinds.append(0)
            case .exact(let name): kinds.append(1); bytes += name.utf8
            case .subdomains(of: let suffix): kinds.append(2); bytes += suffix.utf8
            case .glob(let glob): kinds.append(3); bytes += glob.utf8
            }
        }
        starts.append(bytes.count)
        hostKinds = kinds
        hostStarts = starts
        hostBytes = bytes
        switch rule.match.path {
        case .glob(let glob)?: pathGlob = glob.bytes; pathRegex = nil
        case let regex?: pathGlob = nil; pathRegex = regex
        case nil: pathGlob = nil; pathRegex = nil
        }
    }

    /// What `RuleFilter` could not decide: a method without a bit of its own, the path, and the
    /// host unless the index found the rule by this host. `host` and `path` are the request's
    /// bytes.
    func matchesBeyondFilter(_ request: RequestFacts, host: UnsafeBufferPointer<UInt8>, path: UnsafeBufferPointer<UInt8>,
                             hostKnown: Bool) -> Bool {
        if request.methodBit == RuleFilter.otherMethod, methods?.contains(request.method) == false { return false }
        if let pathGlob, !pathGlob.withUnsafeBufferPointer({ HostMatching.globMatches(path, pattern: $0) }) {
            return false
        }
        if let pathRegex, !pathRegex.matches(request) { return false }
        return hostKnown || matchesHost(host)
    }

    private func matchesHost(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        hostBytes.withUnsafeBufferPointer { all in
            for index in hostKinds.indices {
                let bytes = UnsafeBufferPointer(rebasing: all[hostStarts[index]..<hostStarts[index + 1]])
                let matched: Bool
                switch hostKinds[index] {
                case 0: matched = true
                case 1: matched = host.elementsEqual(bytes)
                case 2: matched = HostMatching.isSubdomain(host, of: bytes)
                default: matched = HostMatching.globMatches(host, pattern: bytes)
                }
                if matched { return true }
            }
            return false
        }
    }
}
