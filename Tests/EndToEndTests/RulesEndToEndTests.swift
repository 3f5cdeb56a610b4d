import Foundation
import ProxyModel
import XCTest

/// Every rule action through the real proxy with curl, over plain HTTP and over HTTPS through
/// interception: what curl gets, what the origin got (or that it got nothing), and the flow.
final class RulesEndToEndTests: XCTestCase {
    /// Curl arguments trusting the proxy's CA (decrypted HTTPS).
    private func trustProxy(_ fixture: InterceptingFixture) -> [String] {
        ["--cacert", fixture.tls.proxyCAFile.path]
    }

    /// block: a plain request and a decrypted one are answered 403 naming the rule, a CONNECT to
    /// a blocked host is refused, and the origin sees none of them.
    func testBlock() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: Trackers
                    match: { host: "*.ads.test" }
                    block: {}
                  - name: Private API
                    match: { host: localhost, path: /private/* }
                    block: { status: 404, body: "gone" }
                  - name: No TLS to 127.0.0.2
                    match: { host: "127.0.0.2" }
                    block: {}
                """)
            let plain = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://pixel.ads.test/t.gif")
            XCTAssertEqual(plain.status, 403, plain.result.summary)
            XCTAssertEqual(plain.bodyText, "blocked by ProxyApp rule 'Trackers'\n")

            let decrypted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/private/keys"),
                                                 trustProxy(fixture))
            XCTAssertEqual(decrypted.status, 404, decrypted.result.summary)
            XCTAssertEqual(decrypted.bodyText, "gone")
            let allowed = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/status/200"),
                                               trustProxy(fixture))
            XCTAssertEqual(allowed.status, 200, allowed.result.summary)

            let refused = try await Curl.viaProxy(fixture.proxy.port, ["https://127.0.0.2:9/"])
            XCTAssertNotEqual(refused.exitCode, 0)
            XCTAssertTrue(refused.stderr.contains("403"), refused.stderr)

            XCTAssertEqual(fixture.tlsOrigin.log.requests.map(\.uri), ["/status/200"])
            let flows = try await fixture.proxy.waitForFlows(count: 4)
            XCTAssertEqual(flows.map(\.appliedRules), [["Trackers"], ["Private API"], [], ["No TLS to 127.0.0.2"]])
            XCTAssertEqual(flows.last?.kind, .tunnel)
        }
    }

    /// map_local: a file, a directory with the rest of the path appended (plain and decrypted),
    /// a missing file answered 404 naming the path, and a `..` that would leave the directory.
    func testMapLocal() async throws {
        try await InterceptingFixture.run { fixture in
            let mocks = fixture.proxy.file("mocks")
            try FileManager.default.createDirectory(at: mocks.appendingPathComponent("v1"), withIntermediateDirectories: true)
            try Data("{\"mocked\":true}".utf8).write(to: fixture.proxy.file("config.json"))
            try Data("users list".utf8).write(to: mocks.appendingPathComponent("v1/users.txt"))
            try Data("secret".utf8).write(to: fixture.proxy.file("secret.txt"))
            let big = fixture.proxy.file("big.bin")
            try PatternBytes.writeFile(big, count: 3 << 20)
            try fixture.useRules("""
                rules:
                  - name: config
                    match: { host: api.test, path: /config }
                    map_local: { file: config.json, headers: { X-Mocked: "yes" } }
                  - name: static
                    match: { host: [api.test, localhost], path: /static/* }
                    map_local: { dir: mocks }
                  - name: big
                    match: { host: api.test, path: /big }
                    map_local: { file: big.bin }
                """)
            let config = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/config")
            XCTAssertEqual(config.status, 200, config.result.summary)
            XCTAssertEqual(config.bodyText, "{\"mocked\":true}")
            XCTAssertEqual(config.header("Content-Type"), "application/json")
            XCTAssertEqual(config.header("X-Mocked"), "yes")

            let listed = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/static/v1/users.txt")
            XCTAssertEqual(listed.bodyText, "users list")
            XCTAssertEqual(listed.header("Content-Type"), "text/plain; charset=utf-8")
            let decrypted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/static/v1/users.txt"),
                                                 trustProxy(fixture))
            XCTAssertEqual(decrypted.bodyText, "users list", decrypted.result.summary)

            let missing = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/static/v1/none.json")
            XCTAssertEqual(missing.status, 404)
            XCTAssertEqual(missing.bodyText, "map_local rule 'static': no file at \(mocks.path)/v1/none.json\n")
            // `/static/%2e%2e/secret.txt` is `/secret.txt` to an origin, and to rules: not under
            // /static/, so the rule does not apply (the request goes on, to an unresolvable host).
            let escape = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/static/%2e%2e/secret.txt",
                                              ["--path-as-is"])
            XCTAssertEqual(escape.status, 502)
            XCTAssertFalse(escape.bodyText.contains("secret\n") || escape.bodyText == "secret")

            let output = fixture.proxy.file("big.out")
            let download = try await Curl.viaProxy(fixture.proxy.port, ["-o", output.path, "http://api.test/big"])
            XCTAssertEqual(download.exitCode, 0, download.summary)
            XCTAssertNil(try PatternBytes.firstMismatch(inFile: output, expectedCount: 3 << 20))

            XCTAssertTrue(fixture.origin.log.requests.isEmpty)
            XCTAssertTrue(fixture.tlsOrigin.log.requests.isEmpty)
            let flows = try await fixture.proxy.waitForFlows(count: 6)
            XCTAssertEqual(flows.map(\.appliedRules), [["config"], ["static"], ["static"], ["static"], [], ["big"]])
            XCTAssertEqual(flows[3].note, "map_local: no file at \(mocks.path)/v1/none.json")
            XCTAssertEqual(flows[5].responseBody.size, 3 << 20)
        }
    }

    /// map_remote: a plain request goes to the origin under a path prefix with its Host
    /// rewritten (or kept), and a decrypted HTTPS request goes to the plain origin.
    func testMapRemote() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: to origin
                    match: { host: api.test, path: /api/* }
                    map_remote: { to: "\(fixture.origin.url("/"))" }
                  - name: keep host
                    match: { host: keep.test }
                    map_remote: { to: "\(fixture.origin.url(""))", preserve_host: true }
                  - name: downgrade
                    match: { host: localhost, port: \(fixture.tlsOrigin.port) }
                    map_remote: { to: "\(fixture.origin.url(""))" }
                """)
            let mapped = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/api/headers?x=1")
            XCTAssertEqual(mapped.status, 200, mapped.result.summary)
            let kept = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://keep.test/headers")
            XCTAssertEqual(kept.status, 200, kept.result.summary)
            let downgraded = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/headers"),
                                                  trustProxy(fixture))
            XCTAssertEqual(downgraded.status, 200, downgraded.result.summary)

            let requests = fixture.origin.log.requests
            XCTAssertEqual(requests.map(\.uri), ["/headers?x=1", "/headers", "/headers"])
            XCTAssertEqual(requests.map { $0.headers.first(named: "Host") },
                           [fixture.origin.authority, "keep.test", fixture.origin.authority])
            XCTAssertTrue(fixture.tlsOrigin.log.requests.isEmpty)
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            XCTAssertEqual(flows.map(\.url), ["http://api.test/api/headers?x=1", "http://keep.test/headers",
                                              fixture.tlsURL("/headers")])
            XCTAssertEqual(flows.map(\.appliedRules), [["to origin"], ["keep host"], ["downgrade"]])
            XCTAssertEqual(flows[0].note, "map_remote: sent to http://\(fixture.origin.authority)/headers?x=1")
        }
    }

    /// dns: a name that resolves nowhere reaches the loopback origin; the origin sees the name
    /// in Host, and over HTTPS the proxy sends it as SNI and verifies the origin's certificate
    /// for it.
    func testDNSOverride() async throws {
        try await InterceptingFixture.run(namedOriginHost: "api.example.invalid") { fixture in
            let namedOrigin = try XCTUnwrap(fixture.namedOrigin)
            try fixture.useRules("""
                rules:
                  - name: spoof
                    match: { host: "*.example.invalid" }
                    dns: { to: 127.0.0.1 }
                """)
            let plain = try await Curl.fetch(viaProxy: fixture.proxy.port,
                                             "http://api.example.invalid:\(fixture.origin.port)/headers")
            XCTAssertEqual(plain.status, 200, plain.result.summary)
            XCTAssertEqual(fixture.origin.log.requests.last?.headers.first(named: "Host"),
                           "api.example.invalid:\(fixture.origin.port)")

            let tls = try await Curl.fetch(viaProxy: fixture.proxy.port,
                                           "https://api.example.invalid:\(namedOrigin.port)/status/201",
                                           trustProxy(fixture))
            XCTAssertEqual(tls.status, 201, tls.result.summary)
            XCTAssertEqual(namedOrigin.log.requests.map(\.uri), ["/status/201"])

            let flows = try await fixture.proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.map(\.appliedRules), [["spoof"], ["spoof"]])
            XCTAssertEqual(flows.map(\.serverAddress), ["127.0.0.1", "127.0.0.1"])
            XCTAssertEqual(flows[1].tls?.upstreamSubject?.contains("api.example.invalid"), true)
        }
    }
}
