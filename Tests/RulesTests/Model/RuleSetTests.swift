@testable import Rules
import RulesTestSupport
import XCTest

/// `RuleSet.plan(for:)`, `blockingConnect` and `dnsOverride`: which rule acts, by kind, in
/// file order, and what each condition takes.
final class RuleSetTests: XCTestCase {
    private func rules(_ yaml: String, file: StaticString = #filePath, line: UInt = #line) -> RuleSet {
        do {
            return try RulesTestSupport.parse(yaml)
        } catch {
            XCTFail("the rules were refused:\n\(error)", file: file, line: line)
            return .empty
        }
    }

    private func request(_ url: String, method: String = "GET") -> RequestFacts {
        RulesTestSupport.request(url, method: method)
    }

    /// The names in the plan, by kind (nil where no rule of that kind matched).
    private func names(_ plan: RequestPlan) -> [String?] {
        [plan.block?.name, plan.mapLocal?.name, plan.mapRemote?.name, plan.rewrite?.name]
    }

    // MARK: - Precedence

    /// The first matching rule of a kind wins, even when a later one is more specific.
    func testFirstMatchingRuleWins() {
        let set = rules("""
            rules:
              - { name: all, match: { host: "*" }, rewrite: { status: 201 } }
              - { name: exact, match: { host: a.com }, rewrite: { status: 202 } }
              - { name: sub, match: { host: "*.a.com" }, block: {} }
              - { name: exact block, match: { host: x.a.com }, block: {} }
            """)
        XCTAssertEqual(names(set.plan(for: request("http://a.com/"))), [nil, nil, nil, "all"])
        XCTAssertEqual(names(set.plan(for: request("http://x.a.com/"))), ["sub", nil, nil, "all"])
        XCTAssertEqual(set.plan(for: request("http://x.a.com/")).rewrite?.action.status, 201)
    }

    /// Each kind has its own winner: a block, a map_local, a map_remote and a rewrite all appear.
    func testKindsAreIndependent() {
        let set = rules("""
            rules:
              - { name: dns, match: { host: "*" }, dns: { to: 127.0.0.1 } }
              - { name: rewrite, match: { host: "*" }, rewrite: { status: 200 } }
              - { name: remote, match: { host: "*" }, map_remote: { to: "http://127.0.0.1:3000" } }
              - { name: local, enabled: false, match: { host: "*" }, map_local: { file: /nonexistent } }
              - { name: block, match: { host: "*" }, block: {} }
              - { name: block 2, match: { host: "*" }, block: {} }
            """)
        let plan = set.plan(for: request("https://a.com/x"))
        XCTAssertEqual(names(plan), ["block", nil, "remote", "rewrite"])
        XCTAssertFalse(plan.isEmpty)
        XCTAssertTrue(RequestPlan().isEmpty)
    }

    /// Disabled rules never match: the next enabled one acts, or none.
    func testDisabledRulesNeverMatch() {
        let set = rules("""
            rules:
              - { name: off, enabled: false, match: { host: a.com }, block: {} }
              - { name: on, match: { host: a.com }, block: { status: 404 } }
              - { name: off too, enabled: false, match: { host: b.com }, block: {} }
            """)
        XCTAssertEqual(set.plan(for: request("http://a.com/")).block?.name, "on")
        XCTAssertTrue(set.plan(for: request("http://b.com/")).isEmpty)
        XCTAssertNil(set.blockingConnect(host: "b.com", port: 443))
        XCTAssertEqual(set.enabledCount, 1)
    }

    /// A set whose rules are all off and whose ssl_proxying is the default needs no lookup.
    func testInertSets() {
        XCTAssertTrue(RuleSet.empty.isInert)
        XCTAssertEqual(RuleSet.empty.enabledCount, 0)
        XCTAssertTrue(rules("rules:\n  - { enabled: false, match: { host: a.com }, block: {} }\n").isInert)
        XCTAssertFalse(rules("rules:\n  - { match: { host: a.com }, block: {} }\n").isInert)
        XCTAssertFalse(rules("ssl_proxying:\n  exclude: a.com\n").isInert)
        XCTAssertTrue(RuleSet.empty.plan(for: request("http://a.com/")).isEmpty)
    }

    // MARK: - Conditions

    /// Port, scheme and method must each hold when given.
    func testPortSchemeAndMethod() {
        let set = rules("""
            rules:
              - { name: port, match: { host: a.com, port: 8080 }, block: {} }
              - { name: scheme, match: { host: b.com, scheme: https }, block: {} }
              - { name: method, match: { host: c.com, method: [POST, PUT] }, block: {} }
            """)
        XCTAssertEqual(set.plan(for: request("http://a.com:8080/")).block?.name, "port")
        XCTAssertNil(set.plan(for: request("http://a.com/")).block)
        XCTAssertEqual(set.plan(for: request("https://b.com/")).block?.name, "scheme")
        XCTAssertNil(set.plan(for: request("http://b.com:443/")).block)
        XCTAssertEqual(set.plan(for: request("http://c.com/", method: "PUT")).block?.name, "method")
        XCTAssertNil(set.plan(for: request("http://c.com/", method: "GET")).block)
        XCTAssertNil(set.plan(for: request("http://c.com/", method: "post")).block, "methods compare as sent")
    }

    /// A path glob sees the path without the query; a path regex searches path and query.
    func testPathAndPathRegex() {
        let set = rules("""
            rules:
              - { name: glob, match: { host: a.com, path: /api/* }, rewrite: { status: 200 } }
              - { name: json, match: { host: b.com, path: "*.json" }, rewrite: { status: 200 } }
              - { name: regex, match: { host: c.com, path_regex: "debug=1" }, rewrite: { status: 200 } }
            """)
        XCTAssertEqual(set.plan(for: request("http://a.com/api/users?x=1")).rewrite?.name, "glob")
        XCTAssertNil(set.plan(for: request("http://a.com/api")).rewrite)
        XCTAssertEqual(set.plan(for: request("http://b.com/x/y.json?v=2")).rewrite?.name, "json")
        XCTAssertNil(set.plan(for: request("http://b.com/x/y.json5")).rewrite)
        XCTAssertEqual(set.plan(for: request("http://c.com/p?debug=1")).rewrite?.name, "regex")
        XCTAssertNil(set.plan(for: request("http://c.com/p?debug=0")).rewrite)
    }

    /// The plan carries the rule's path condition (map_local and map_remote need it) and its action.
    func testAppliedRuleCarriesPathAndAction() {
        let set = rules("""
            rules:
              - { name: r, match: { host: a.com, path: /api/* }, map_remote: { to: "http://127.0.0.1:3000/v2" } }
              - { name: b, match: { host: a.com }, block: { status: 410 } }
            """)
        let plan = set.plan(for: request("http://a.com/api/x"))
        XCTAssertEqual(plan.mapRemote?.path?.description, "path /api/*")
        XCTAssertEqual(plan.mapRemote?.action.destination.url, "http://127.0.0.1:3000/v2")
        XCTAssertNil(plan.block?.path)
        XCTAssertEqual(plan.block?.action.status, 410)
    }

    /// Any pattern of a host list may match; hosts are compared normalized.
    func testHostLists() {
        let set = rules("""
            rules:
              - { name: list, match: { host: [a.com, "*.b.com", "api-?.c.com", "[::1]"] }, block: {} }
            """)
        for url in ["http://a.com/", "http://x.y.b.com/", "http://api-1.c.com/", "http://[::1]:8080/", "http://A.COM./"] {
            XCTAssertEqual(set.plan(for: request(url)).block?.name, "list", url)
        }
        for url in ["http://b.com/", "http://xa.com/", "http://api-12.c.com/", "http://127.0.0.1/"] {
            XCTAssertNil(set.plan(for: request(url)).block, url)
        }
    }

    // MARK: - CONNECT and DNS

    /// Only block rules decidable from host and port refuse a CONNECT: no method, no path, no
    /// scheme but https; the port must match.
    func testBlockingConnect() {
        let set = rules("""
            rules:
              - { name: method, match: { host: a.com, method: GET }, block: {} }
              - { name: path, match: { host: a.com, path: /x }, block: {} }
              - { name: regex, match: { host: a.com, path_regex: x }, block: {} }
              - { name: http, match: { host: a.com, scheme: http }, block: {} }
              - { name: rewrite, match: { host: a.com }, rewrite: { status: 200 } }
              - { name: port, match: { host: a.com, port: 8443 }, block: {} }
              - { name: https, match: { host: a.com, scheme: [http, https] }, block: { status: 451 } }
              - { name: any, match: { host: "*" }, block: {} }
            """)
        let hit = set.blockingConnect(host: "a.com", port: 443)
        XCTAssertEqual(hit?.name, "https")
        XCTAssertEqual(hit?.action.status, 451)
        XCTAssertNil(hit?.path)
        XCTAssertEqual(set.blockingConnect(host: "a.com", port: 8443)?.name, "port")
        XCTAssertEqual(set.blockingConnect(host: "b.com", port: 443)?.name, "any")
        XCTAssertNil(rules("rules:\n  - { match: { host: a.com, method: GET }, block: {} }\n").blockingConnect(host: "a.com", port: 443))
        XCTAssertNil(RuleSet.empty.blockingConnect(host: "a.com", port: 443))
    }

    /// The first dns rule for the host wins, and its port must match.
    func testDNSOverride() {
        let set = rules("""
            rules:
              - { name: block, match: { host: a.com }, block: {} }
              - { name: alt port, match: { host: a.com, port: 8443 }, dns: { to: 10.0.0.2 } }
              - { name: any port, match: { host: [a.com, "*.a.com"] }, dns: { to: [10.0.0.1, "::1"] } }
              - { name: later, match: { host: a.com }, dns: { to: 10.0.0.3 } }
            """)
        XCTAssertEqual(set.dnsOverride(host: "a.com", port: 8443)?.name, "alt port")
        XCTAssertEqual(set.dnsOverride(host: "a.com", port: 8443)?.action.addresses, ["10.0.0.2"])
        XCTAssertEqual(set.dnsOverride(host: "a.com", port: 443)?.name, "any port")
        XCTAssertEqual(set.dnsOverride(host: "a.com", port: 443)?.action.addresses, ["10.0.0.1", "::1"])
        XCTAssertEqual(set.dnsOverride(host: "x.a.com", port: 80)?.name, "any port")
        XCTAssertNil(set.dnsOverride(host: "b.com", port: 443))
        XCTAssertEqual(names(set.plan(for: request("http://a.com/"))), ["block", nil, nil, nil], "dns rules are not in the plan")
    }
}
