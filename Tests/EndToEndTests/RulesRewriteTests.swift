import Foundation
import ProxyModel
import XCTest

/// Rewrite rules, SSL-proxying lists and precedence through the real proxy with curl.
final class RulesRewriteTests: XCTestCase {
    /// Header, status and body rewrites on plain and decrypted exchanges: the origin gets the
    /// edited request, curl gets the edited response; a gzip body arrives decoded and replaced.
    func testRewrite() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: edit
                    match: { host: [127.0.0.1, localhost] }
                    rewrite:
                      request_headers: { set: { User-Agent: rewritten }, remove: [X-Secret], add: { X-Added: "1" } }
                      response_headers: { add: { X-Rewritten: "yes" } }
                      response_body: [ { regex: "line ([0-9]+) of", replace: "row $1 in" } ]
                      request_body: [ { find: "password=hunter2", replace: "password=REDACTED" } ]
                  - name: teapot
                    match: { host: 127.0.0.1, path: /status/* }
                    rewrite: { status: 418 }
                """)
            let headers = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/headers"),
                                               ["-H", "X-Secret: s3", "-A", "curl-original"])
            XCTAssertEqual(headers.status, 200, headers.result.summary)
            XCTAssertEqual(headers.header("X-Rewritten"), "yes")
            let sent = try XCTUnwrap(fixture.origin.log.requests.last)
            XCTAssertEqual(sent.headers.first(named: "User-Agent"), "rewritten")
            XCTAssertEqual(sent.headers.first(named: "X-Added"), "1")
            XCTAssertNil(sent.headers.first(named: "X-Secret"))

            let gzip = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/gzip/3"))
            XCTAssertNil(gzip.header("Content-Encoding"), "the rewritten body goes out decoded")
            XCTAssertEqual(gzip.bodyText, "row 0 in the gzip route\nrow 1 in the gzip route\nrow 2 in the gzip route\n")

            let posted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo"),
                                              ["-H", "Content-Type: application/x-www-form-urlencoded",
                                               "--data-binary", "user=a&password=hunter2"])
            XCTAssertEqual(posted.bodyText, "user=a&password=REDACTED")

            let decrypted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/gzip/1"),
                                                 ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(decrypted.bodyText, "row 0 in the gzip route\n", decrypted.result.summary)
            XCTAssertEqual(decrypted.header("X-Rewritten"), "yes")

            // The first matching rewrite rule wins: /status/* on 127.0.0.1 gets "edit", not "teapot".
            let status = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/status/200"))
            XCTAssertEqual(status.status, 200)

            let flows = try await fixture.proxy.waitForFlows(count: 5)
            XCTAssertEqual(flows.map(\.appliedRules), Array(repeating: ["edit"], count: 5))
            XCTAssertEqual(flows[2].requestBody.bytes, Data("user=a&password=hunter2".utf8), "the client's request")
            XCTAssertEqual(flows[1].responseBody.bytes,
                           Data("row 0 in the gzip route\nrow 1 in the gzip route\nrow 2 in the gzip route\n".utf8),
                           "the response the client got")
        }
    }

    /// ssl_proxying: an excluded host's tunnel is relayed untouched (curl then needs the
    /// origin's own CA) and recorded as a tunnel naming why; an included one is decrypted.
    func testSSLProxyingLists() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                ssl_proxying:
                  include: ["*"]
                  exclude: [localhost]
                """)
            let relayed = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/status/204"),
                                               ["--cacert", fixture.tls.originCAFile.path])
            XCTAssertEqual(relayed.status, 204, relayed.result.summary)
            try fixture.useRules("""
                ssl_proxying:
                  include: ["*.example.test", localhost]
                """)
            let decrypted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/status/202"),
                                                 ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(decrypted.status, 202, decrypted.result.summary)

            let flows = try await fixture.proxy.waitForFlows(count: 2)
            let tunnel = try XCTUnwrap(flows.first { $0.kind == .tunnel })
            // curl may close with the server's session tickets unread: its kernel's reset is then
            // noted after the reason (an ordinary end, not an error).
            XCTAssertTrue(tunnel.note?.hasPrefix("not decrypted: excluded by ssl_proxying") == true, tunnel.note ?? "nil")
            XCTAssertNil(tunnel.error)
            XCTAssertEqual(tunnel.appliedRules, ["ssl_proxying"])
            XCTAssertGreaterThan(tunnel.bytesDown, 0)
            let http = try XCTUnwrap(flows.first { $0.kind == .http })
            XCTAssertEqual(http.status, 202)
            XCTAssertEqual(http.scheme, "https")
        }
    }

    /// Precedence: the first matching rule of a kind wins in file order, a disabled rule never
    /// acts, and a block or map_local answer wins over forwarding rules.
    func testPrecedence() async throws {
        try await InterceptingFixture.run { fixture in
            try Data("local".utf8).write(to: fixture.proxy.file("local.txt"))
            try fixture.useRules("""
                rules:
                  - name: off
                    enabled: false
                    match: { host: "*" }
                    block: {}
                  - name: first block
                    match: { host: a.test }
                    block: { status: 410 }
                  - name: second block
                    match: { host: "*.test" }
                    block: { status: 451 }
                  - name: local
                    match: { host: b.test }
                    map_local: { file: local.txt }
                  - name: remote
                    match: { host: [b.test, c.test] }
                    map_remote: { to: "\(fixture.origin.url(""))" }
                  - name: stamp
                    match: { host: c.test }
                    rewrite: { response_headers: { add: { X-Stamp: "1" } } }
                """)
            let first = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://a.test/")
            XCTAssertEqual(first.status, 410)
            let local = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://b.test/")
            XCTAssertEqual(local.status, 451, "a block rule acts before map_local")
            try fixture.useRules("""
                rules:
                  - name: local
                    match: { host: b.test }
                    map_local: { file: local.txt }
                  - name: remote
                    match: { host: [b.test, c.test] }
                    map_remote: { to: "\(fixture.origin.url(""))" }
                  - name: stamp
                    match: { host: c.test }
                    rewrite: { response_headers: { add: { X-Stamp: "1" } } }
                """)
            let mapped = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://b.test/")
            XCTAssertEqual(mapped.bodyText, "local", "map_local answers before map_remote forwards")
            let both = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://c.test/status/200")
            XCTAssertEqual(both.status, 200, both.result.summary)
            XCTAssertEqual(both.header("X-Stamp"), "1")

            let flows = try await fixture.proxy.waitForFlows(count: 4)
            XCTAssertEqual(flows.map(\.appliedRules), [["first block"], ["second block"], ["local"], ["remote", "stamp"]])
        }
    }
}
