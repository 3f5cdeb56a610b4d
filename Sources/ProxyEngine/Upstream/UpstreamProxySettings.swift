import ProxyCore
import ProxyModel
import Rules

/// Which upstream proxy, if any, a connection to an origin goes through: `--upstream-proxy`
/// for every host but those `--upstream-bypass` names, unless an `upstream_proxy` rule says
/// otherwise for the request (or, for a tunnel, for its host and port).
///
/// Connections made through a proxy are pooled apart from direct ones and per proxy (the pool
/// key holds it), so a rule choosing another proxy for some paths never shares a connection.
public struct UpstreamProxySettings: Sendable {
    /// Every origin's connections go through it, unless bypassed; nil: direct.
    public var proxy: UpstreamProxy?
    /// Hosts that always go direct (the host patterns rules use).
    public var bypass: HostPatternList

    public init(proxy: UpstreamProxy? = nil, bypass: HostPatternList = HostPatternList()) {
        self.proxy = proxy
        self.bypass = bypass
    }

    /// The proxy for a connection to `host` (normalized): a rule's choice first, then the
    /// bypass list, then `proxy`.
    public func proxy(forHost host: String, rule: UpstreamProxyAction?) -> UpstreamProxy? {
        if let rule { return rule.proxy }
        guard let proxy, !bypass.matches(normalizedHost: host) else { return nil }
        return proxy
    }

    /// What a flow that went through `proxy` says about it.
    static func note(_ proxy: UpstreamProxy) -> String { "through upstream proxy \(proxy)" }

    /// For a tunnel to `host`:`port` (normalized host), with the rules in force: the proxy, and
    /// the rule that chose it.
    func proxyForTunnel(host: String, port: Int, rules: RuleSet) -> (proxy: UpstreamProxy?, rule: String?) {
        let rule = rules.upstreamProxyForConnect(host: host, port: port)
        return (proxy(forHost: host, rule: rule?.action), rule?.name)
    }

    /// `proxyForTunnel`, with the rule and the way it goes recorded on the tunnel's `flow`.
    func proxyForTunnel(host: String, port: Int, rules: RuleSet, recordingOn flow: inout Flow) -> UpstreamProxy? {
        let route = proxyForTunnel(host: host, port: port, rules: rules)
        if let rule = route.rule { flow.appliedRules.append(rule) }
        if let proxy = route.proxy { flow.appendNote(Self.note(proxy)) }
        return route.proxy
    }
}
