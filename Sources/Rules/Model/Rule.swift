import ProxyCore

/// One entry of the rules file: a name, whether it is on, what it matches and the one thing it
/// does to what it matches.
///
/// Rules are values; a `RuleSet` holds them in file order, and the first enabled rule of each
/// kind that matches a request is the one that acts.
public struct Rule: Sendable {
    /// As written (`name:`), or `<kind> #<n>` with the rule's 1-based position in the file.
    /// Names are unique within a file: flows record them.
    public var name: String
    public var enabled: Bool
    public var match: RuleMatch
    public var action: RuleAction
    /// Where the rule starts in its file (1-based line), for messages and `rules list`.
    public var line: Int

    public init(name: String, enabled: Bool = true, match: RuleMatch, action: RuleAction, line: Int = 0) {
        self.name = name
        self.enabled = enabled
        self.match = match
        self.action = action
        self.line = line
    }

    public var kind: RuleKind { action.kind }
}

/// The kinds of rule; at most one rule of each kind acts on a request.
public enum RuleKind: String, Sendable, CaseIterable, Hashable {
    case block
    case mapLocal = "map_local"
    case mapRemote = "map_remote"
    case dns
    case rewrite
    case upstreamProxy = "upstream_proxy"
    case throttle
}

/// What a rule does.
public enum RuleAction: Sendable {
    case block(BlockAction)
    case mapLocal(MapLocalAction)
    case mapRemote(MapRemoteAction)
    case dns(DNSOverride)
    case rewrite(RewriteAction)
    case upstreamProxy(UpstreamProxyAction)
    /// A slow network for what matches: paced both ways, with latency (`ThrottleProfile`).
    case throttle(ThrottleProfile)

    public var kind: RuleKind {
        switch self {
        case .block: return .block
        case .mapLocal: return .mapLocal
        case .mapRemote: return .mapRemote
        case .dns: return .dns
        case .rewrite: return .rewrite
        case .upstreamProxy: return .upstreamProxy
        case .throttle: return .throttle
        }
    }
}
