import NIOHTTP1
import ProxyCore
import Rules
import RulesTestSupport
import XCTest
@testable import ProxyEngine

/// Which upstream proxy a request or tunnel goes through: `--upstream-proxy` for every host,
/// `--upstream-bypass` hosts direct, an `upstream_proxy` rule above both (per path for
/// requests, per host and port for tunnels), and the flow saying which way it went.
final class UpstreamProxyRoutingTests: XCTestCase {
    private let corp = UpstreamProxy(scheme: .http, host: "proxy.corp", port: 3128)
    private let tor = UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: 9050)

    private func request(_ host: String, _ path: String = "/") -> ClientRequest {
        ClientRequest(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: path), scheme: "http", host: host,
                      port: 80, pathAndQuery: path, authority: host,
                      framing: RequestFraming.Decision(framing: .none, isCanonical: true))
    }

    private func target(_ request: ClientRequest, rules: RuleSet = .empty,
                        _ settings: UpstreamProxySettings) -> UpstreamDestination? {
        guard case .forward(let target) = RequestRouting.decide(request, rules: rules, upstream: settings) else { return nil }
        return target
    }

    func testDefaultProxyAndBypassWithoutRules() throws {
        let settings = UpstreamProxySettings(proxy: corp, bypass: try HostPatternList(parsing: ["localhost", "*.internal"]))
        XCTAssertEqual(target(request("example.com"), settings)?.upstreamProxy, corp)
        XCTAssertEqual(target(request("example.com"), settings)?.notes, ["through upstream proxy http://proxy.corp:3128"])
        XCTAssertEqual(target(request("EXAMPLE.com."), settings)?.upstreamProxy, corp)
        XCTAssertNil(target(request("localhost"), settings)?.upstreamProxy)
        XCTAssertNil(target(request("Build.Internal"), settings)?.upstreamProxy)
        XCTAssertEqual(target(request("localhost"), settings)?.notes, [])
        XCTAssertNil(target(request("example.com"), UpstreamProxySettings())?.upstreamProxy)
    }

    func testRulesChoosePerPathAboveTheDefault() throws {
        let rules = try RulesTestSupport.parse("""
            rules:
              - name: onion
                match: { host: "*.onion" }
                upstream_proxy: { url: "socks5h://127.0.0.1:9050" }
              - name: api direct
                match: { host: example.com, path: "/api/*" }
                upstream_proxy: { direct: true }
            """)
        let settings = UpstreamProxySettings(proxy: corp, bypass: try HostPatternList(parsing: ["*.onion"]))
        let onion = target(request("abc.onion"), rules: rules, settings)
        XCTAssertEqual(onion?.upstreamProxy, tor, "a rule beats the bypass list")
        XCTAssertEqual(onion?.appliedRules, ["onion"])
        XCTAssertEqual(onion?.notes, ["through upstream proxy socks5h://127.0.0.1:9050"])
        let api = target(request("example.com", "/api/v1"), rules: rules, settings)
        XCTAssertNil(api?.upstreamProxy)
        XCTAssertEqual(api?.appliedRules, ["api direct"])
        XCTAssertEqual(target(request("example.com", "/web"), rules: rules, settings)?.upstreamProxy, corp)

        // A tunnel knows no path: only rules decided by host and port choose for it.
        XCTAssertEqual(settings.proxyForTunnel(host: "abc.onion", port: 443, rules: rules).proxy, tor)
        XCTAssertEqual(settings.proxyForTunnel(host: "abc.onion", port: 443, rules: rules).rule, "onion")
        XCTAssertEqual(settings.proxyForTunnel(host: "example.com", port: 443, rules: rules).proxy, corp)
        XCTAssertNil(settings.proxyForTunnel(host: "example.com", port: 443, rules: rules).rule)
    }

    func testConnectionsThroughAProxyArePooledApart() {
        let direct = UpstreamConnectionPool.Key(host: "h", port: 80)
        var viaCorp = direct
        viaCorp.via = corp
        var viaTor = direct
        viaTor.via = tor
        XCTAssertEqual(Set([direct, viaCorp, viaTor]).count, 3)
    }
}
