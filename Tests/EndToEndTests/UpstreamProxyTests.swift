import Foundation
import ProxyCore
import ProxyEngine
import ProxyModel
import XCTest

/// ProxyApp chained to an upstream proxy — a second ProxyApp, as HTTP proxy and as SOCKS5
/// server, with and without a login: plain HTTP in absolute form, HTTPS decrypted here and
/// tunnelled there, opaque tunnels (server speaks first), `--upstream-bypass` and
/// `upstream_proxy` rules, and every upstream failure a 502 naming the upstream proxy. Both
/// captures are checked.
final class UpstreamProxyTests: XCTestCase {
    private static let login = (user: "chain", password: "up:str@am")

    /// A second proxy (no interception: CONNECT and SOCKS5 relay bytes), maybe with a login.
    private func withUpstream(login: Bool = false, _ body: (ProxyHarness) async throws -> Void) async throws {
        let upstream = try await ProxyHarness.start(interception: nil) { configuration in
            if login { configuration.access.credentials.add(user: Self.login.user, password: Self.login.password) }
        }
        do {
            try await body(upstream)
        } catch {
            await upstream.shutdown()
            throw error
        }
        await upstream.shutdown()
    }

    private static func url(_ scheme: UpstreamProxy.Scheme, _ port: Int, login: Bool = false) -> UpstreamProxy {
        UpstreamProxy(scheme: scheme, host: "127.0.0.1", port: port, user: login ? Self.login.user : nil,
                      password: login ? Self.login.password : nil)
    }

    func testPlainAndHTTPSThroughAnHTTPUpstreamWithLogin() async throws {
        try await withUpstream(login: true) { upstream in
            let proxy = Self.url(.http, upstream.port, login: true)
            var ports = (plain: 0, tls: 0)
            try await InterceptingFixture.run(configure: { $0.upstreamProxies = UpstreamProxySettings(proxy: proxy) }) { fixture in
                let plain = try await Curl.fetch(viaProxy: fixture.proxy.port,
                                                 "http://127.0.0.1:\(fixture.origin.port)/echo/plain", ["--data-binary", "p"])
                XCTAssertEqual(plain.status, 200, plain.result.summary)
                XCTAssertEqual(plain.bodyText, "p")
                let secure = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/secure"),
                                                  ["--cacert", fixture.tls.proxyCAFile.path, "--data-binary", "s"])
                XCTAssertEqual(secure.status, 200, secure.result.summary)
                XCTAssertEqual(secure.bodyText, "s")

                let here = try await fixture.proxy.waitForFlows(count: 2).filter { $0.kind == .http }
                XCTAssertEqual(here.map(\.path).sorted(), ["/echo/plain", "/echo/secure"])
                for flow in here {
                    XCTAssertEqual(flow.note, "through upstream proxy http://chain@127.0.0.1:\(upstream.port)", flow.path)
                }
                ports = (fixture.origin.port, fixture.tlsOrigin.port)
            }
            // Upstream (its tunnel is recorded when it closes: when the front proxy stopped):
            // the plain request arrived in absolute form (it was proxied, not served as the
            // proxy's own page), the HTTPS one as a CONNECT to the origin.
            let there = try await upstream.waitForFlows(count: 2)
            let proxied = try XCTUnwrap(there.first { $0.kind == .http }, "\(there)")
            XCTAssertEqual(proxied.path, "/echo/plain")
            XCTAssertEqual(proxied.port, ports.plain)
            XCTAssertEqual(proxied.requestHeaders.first(named: "Proxy-Authorization"), "REDACTED")
            let tunnel = try XCTUnwrap(there.first { $0.kind == .tunnel }, "\(there)")
            XCTAssertEqual(tunnel.host, "localhost")
            XCTAssertEqual(tunnel.port, ports.tls)
        }
    }

    func testSOCKS5UpstreamsResolveWhereTheySay() async throws {
        try await withUpstream(login: true) { upstream in
            for scheme in [UpstreamProxy.Scheme.socks5h, .socks5] {
                let proxy = Self.url(scheme, upstream.port, login: true)
                try await InterceptingFixture.run(configure: { $0.upstreamProxies = UpstreamProxySettings(proxy: proxy) }) { fixture in
                    let secure = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/\(scheme)"),
                                                      ["--cacert", fixture.tls.proxyCAFile.path, "--data-binary", "x",
                                                       "--resolve", "localhost:\(fixture.tlsOrigin.port):127.0.0.1"])
                    XCTAssertEqual(secure.status, 200, "\(scheme): \(secure.result.summary)")
                    let plain = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://127.0.0.1:\(fixture.origin.port)/echo/p")
                    XCTAssertEqual(plain.status, 200, "\(scheme): \(plain.result.summary)")
                    let flow = try await fixture.proxy.waitForFlows(count: 2).first { $0.path == "/echo/\(scheme)" }
                    XCTAssertEqual(flow?.note, "through upstream proxy \(scheme)://chain@127.0.0.1:\(upstream.port)")
                }
            }
            // socks5h hands the name over; socks5 an address ProxyApp resolved.
            let tunnels = try await upstream.waitForFlows(count: 4).filter { $0.port != 0 }
            let hosts = Set(tunnels.map(\.host))
            XCTAssertTrue(hosts.contains("localhost"), "\(hosts)")
            XCTAssertTrue(hosts.contains { $0 == "127.0.0.1" || $0 == "::1" }, "\(hosts)")
        }
    }

    /// Without interception a CONNECT is relayed through the upstream proxy; a destination
    /// that speaks first is heard (its greeting may come with the proxy's answer).
    func testOpaqueTunnelThroughUpstreamHearsAServerThatSpeaksFirst() async throws {
        let echo = try await TCPEchoServer.start(greeting: "220 ready\r\n")
        do {
            try await withUpstream { upstream in
                for scheme in [UpstreamProxy.Scheme.http, .socks5h] {
                    let front = try await ProxyHarness.start(interception: nil) {
                        $0.upstreamProxies = UpstreamProxySettings(proxy: Self.url(scheme, upstream.port))
                    }
                    do {
                        let client = try RawClient(port: front.port)
                        try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
                        XCTAssertTrue(try client.read(timeout: 10) { String(decoding: $0, as: UTF8.self).contains("220 ready\r\n") },
                                      "\(scheme): \(String(decoding: client.pending, as: UTF8.self))")
                        try client.send("ping\n")
                        XCTAssertTrue(try client.read(timeout: 10) { String(decoding: $0, as: UTF8.self).hasSuffix("ping\n") })
                        client.close()
                        let flow = try await front.waitForFlows(count: 1).first
                        XCTAssertEqual(flow?.kind, .tunnel)
                        XCTAssertEqual(flow?.note?.contains("through upstream proxy \(scheme)://127.0.0.1:\(upstream.port)"), true,
                                       flow?.note ?? "no note")
                    } catch {
                        await front.shutdown()
                        throw error
                    }
                    await front.shutdown()
                }
            }
        } catch {
            await echo.shutdown()
            throw error
        }
        await echo.shutdown()
    }

    func testUpstreamFailuresAre502sNamingTheUpstreamProxy() async throws {
        let dead = try ListeningSocket.refusing()
        defer { dead.close() }
        try await withUpstream(login: true) { upstream in
            let cases: [(UpstreamProxy, String)] = [
                (Self.url(.http, dead.port), "upstream proxy http://127.0.0.1:\(dead.port): connection refused by 127.0.0.1:\(dead.port)"),
                (Self.url(.http, upstream.port), "upstream proxy http://127.0.0.1:\(upstream.port): asks for a login (407"),
                (UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: upstream.port, user: "chain", password: "wrong"),
                 "upstream proxy socks5h://chain@127.0.0.1:\(upstream.port): refused the login for user 'chain'"),
            ]
            for (proxy, expected) in cases {
                try await InterceptingFixture.run(configure: { $0.upstreamProxies = UpstreamProxySettings(proxy: proxy) }) { fixture in
                    for url in ["http://127.0.0.1:\(fixture.origin.port)/echo/x", fixture.tlsURL("/echo/x")] {
                        let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, url,
                                                           ["--cacert", fixture.tls.proxyCAFile.path])
                        XCTAssertEqual(fetched.status, 502, "\(proxy) \(url): \(fetched.result.summary)")
                        XCTAssertTrue(fetched.bodyText.hasPrefix(expected), "\(url): \(fetched.bodyText)")
                        XCTAssertNil(fetched.header("Proxy-Authenticate"), "the upstream's login is not asked of the client")
                    }
                    XCTAssertEqual(fixture.origin.log.requests.count + fixture.tlsOrigin.log.requests.count, 0)
                    let flows = try await fixture.proxy.waitForFlows(count: 2).filter { $0.kind == .http }
                    XCTAssertEqual(flows.count, 2)
                    XCTAssertTrue(flows.allSatisfy { $0.error?.hasPrefix(expected) == true }, "\(flows.map(\.error))")
                }
            }
        }
    }

    func testBypassAndRulesGoDirect() async throws {
        let dead = try ListeningSocket.refusing()
        defer { dead.close() }
        try await withUpstream { upstream in
            let settings = UpstreamProxySettings(proxy: Self.url(.http, dead.port),
                                                 bypass: try HostPatternList(parsing: ["127.0.0.1"]))
            try await InterceptingFixture.run(configure: { $0.upstreamProxies = settings }) { fixture in
                try fixture.useRules("""
                    rules:
                      - name: secure direct
                        match: { host: localhost, path: "/echo/direct*" }
                        upstream_proxy: { direct: true }
                      - name: via second
                        match: { host: localhost, path: "/echo/second*" }
                        upstream_proxy: { url: "http://127.0.0.1:\(upstream.port)" }
                    """)
                let bypassed = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://127.0.0.1:\(fixture.origin.port)/echo/b")
                XCTAssertEqual(bypassed.status, 200, bypassed.result.summary)
                let ca = ["--cacert", fixture.tls.proxyCAFile.path]
                let direct = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/direct"), ca)
                XCTAssertEqual(direct.status, 200, direct.result.summary)
                let second = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/second"), ca)
                XCTAssertEqual(second.status, 200, second.result.summary)
                let other = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/echo/other"), ca)
                XCTAssertEqual(other.status, 502, "no rule, not bypassed: the dead default")
                let flows = try await fixture.proxy.waitForFlows(count: 4).filter { $0.kind == .http }
                XCTAssertEqual(flows.first { $0.path == "/echo/direct" }?.appliedRules, ["secure direct"])
                XCTAssertNil(flows.first { $0.path == "/echo/direct" }?.note)
                XCTAssertEqual(flows.first { $0.path == "/echo/second" }?.appliedRules, ["via second"])
            }
            // Only the request a rule sent there (recorded once the front proxy stopped).
            let there = try await upstream.waitForFlows(count: 1)
            XCTAssertEqual(there.map(\.host), ["localhost"])
        }
    }
}
