import Foundation
import ProxyModel
import XCTest

/// A block rule on an IP address or a name holds against every other spelling of its host —
/// for absolute-form requests, for CONNECT, and for absolute-form requests inside a tunnel —
/// because the proxy matches the host in the one form it also dials. Spellings it will not
/// rewrite are a 400 naming why. Raw sockets: curl would canonicalize the spellings itself.
final class HostSpellingTests: XCTestCase {
    /// Other spellings of 127.0.0.1: the ones `getaddrinfo` and browsers read as it.
    private static let loopbackSpellings = [
        "127.0.0.1", "2130706433", "0x7f.1", "0X7F.1", "0177.0.0.1", "127.1", "127.0.1", "0x7f000001",
        "127.0.0.1.", "127.000.000.001", "0x7f.0.0.0x1", "[::ffff:127.0.0.1]", "[::FFFF:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
    ]

    /// One request on a fresh connection, and its response.
    private func exchange(_ proxyPort: Int, _ request: String, noBody: Bool = false) throws -> RawResponse {
        let client = try RawClient(port: proxyPort)
        try client.send(request)
        return try client.readResponse(noBody: noBody)
    }

    private func get(_ proxyPort: Int, _ authority: String, _ path: String = "/secret") throws -> RawResponse {
        try exchange(proxyPort, "GET http://\(authority)\(path) HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
    }

    private func connect(_ proxyPort: Int, _ authority: String) throws -> RawResponse {
        try exchange(proxyPort, "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n", noBody: true)
    }

    /// Asserts a GET and a CONNECT to each spelling are refused by `rule` (403).
    private func assertBlocked(_ spellings: [String], port: Int, rule: String, proxyPort: Int,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        for spelling in spellings {
            let plain = try get(proxyPort, "\(spelling):\(port)")
            XCTAssertEqual(plain.status, 403, "GET \(spelling)", file: file, line: line)
            XCTAssertEqual(plain.bodyText, "blocked by ProxyApp rule '\(rule)'\n", "GET \(spelling)", file: file, line: line)
            let tunnel = try connect(proxyPort, "\(spelling):\(port)")
            XCTAssertEqual(tunnel.status, 403, "CONNECT \(spelling)", file: file, line: line)
            XCTAssertEqual(tunnel.header("Proxy-Status"),
                           "ProxyApp; error=http_request_denied; details=\"blocked by rule '\(rule)'\"",
                           "CONNECT \(spelling)", file: file, line: line)
        }
    }

    /// The reason of a 400, or what came instead.
    private func refusal(_ response: RawResponse) -> String? {
        response.status == 400 ? response.proxyReason : "status \(response.status)"
    }

    /// A block on 127.0.0.1 catches every spelling of it: plain, CONNECT, and absolute-form
    /// inside a tunnel to a name the rule does not cover. The origin sees only the one request
    /// that was allowed, and the flows record the host that was matched.
    func testBlockOnIPv4CatchesEverySpelling() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: loopback
                    match: { host: 127.0.0.1 }
                    block: {}
                """)
            let port = fixture.origin.port
            try assertBlocked(Self.loopbackSpellings, port: port, rule: "loopback", proxyPort: fixture.proxy.port)

            let tunnel = try RawClient(port: fixture.proxy.port)
            try tunnel.send("CONNECT localhost:\(port) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
            XCTAssertEqual(try tunnel.readResponse(noBody: true).status, 200)
            for spelling in Self.loopbackSpellings {
                try tunnel.send("GET http://\(spelling):\(port)/secret HTTP/1.1\r\nHost: \(spelling):\(port)\r\n\r\n")
                let inside = try tunnel.readResponse()
                XCTAssertEqual(inside.status, 403, "GET \(spelling) inside a tunnel")
            }
            try tunnel.send("GET /status/200 HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
            XCTAssertEqual(try tunnel.readResponse().status, 200)
            tunnel.close()

            XCTAssertEqual(fixture.origin.log.requests.map(\.uri), ["/status/200"])
            let flows = try await fixture.proxy.waitForFlows(count: 3 * Self.loopbackSpellings.count + 1)
            let blocked = flows.filter { $0.appliedRules == ["loopback"] }
            XCTAssertEqual(blocked.count, 3 * Self.loopbackSpellings.count)
            XCTAssertEqual(Set(blocked.map(\.host)), ["127.0.0.1"])
        }
    }

    /// A block on [::1] catches the other IPv6 spellings of it; a zone is refused, not ignored.
    func testBlockOnIPv6CatchesEverySpelling() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: v6 loopback
                    match: { host: "[::1]" }
                    block: {}
                """)
            let spellings = ["[::1]", "[0:0::1]", "[0000:0000:0000:0000:0000:0000:0000:0001]", "[::0:1]", "[0::0:0:1]"]
            try assertBlocked(spellings, port: 9, rule: "v6 loopback", proxyPort: fixture.proxy.port)
            for zoned in ["[::1%25lo]", "[::1%251]"] {
                let reason = "bad request: IPv6 zone identifiers are not supported: '\(zoned)'\n"
                XCTAssertEqual(refusal(try get(fixture.proxy.port, "\(zoned):9")), reason)
                XCTAssertEqual(refusal(try connect(fixture.proxy.port, "\(zoned):9")), reason)
            }
        }
    }

    /// A block on a name catches its case and trailing-dot spellings, and an IDN rule catches the
    /// punycode a client sends; spellings the proxy will not rewrite are refused.
    func testBlockOnNameCatchesEverySpelling() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: name
                    match: { host: blocked.test }
                    block: {}
                  - name: idn
                    match: { host: bücher.test }
                    block: {}
                """)
            let proxyPort = fixture.proxy.port
            try assertBlocked(["blocked.test", "BLOCKED.TEST", "blocked.test.", "Blocked.Test."], port: 80, rule: "name",
                              proxyPort: proxyPort)
            try assertBlocked(["xn--bcher-kva.test", "XN--BCHER-KVA.test", "xn--bcher-kva.test."], port: 80, rule: "idn",
                              proxyPort: proxyPort)
            let refused: [(String, String)] = [
                ("blocked.test..", "host 'blocked.test..' has an empty label"),
                ("%62locked.test", "host '%62locked.test' is percent-encoded: send the host itself"),
                ("blocked%2etest", "host 'blocked%2etest' is percent-encoded: send the host itself"),
            ]
            for (host, reason) in refused {
                XCTAssertEqual(refusal(try get(proxyPort, "\(host):80")), "bad request: \(reason)\n", host)
                XCTAssertEqual(refusal(try connect(proxyPort, "\(host):80")), "bad request: \(reason)\n", host)
            }
            // Unicode in a request-target: refused (by NIO's parser or with our reason), never resolved.
            XCTAssertEqual(try get(proxyPort, "bücher.test:80").status, 400)
        }
    }

    /// Spellings of a loopback address the proxy refuses rather than rewrites, with the reason:
    /// for GET and for CONNECT; nothing reaches the origin.
    func testUnrewritableSpellingsAreRefused() async throws {
        try await Fixture.run { proxy, origin in
            let port = origin.port
            let refused: [(String, String)] = [
                ("%31%32%37.0.0.1", "host '%31%32%37.0.0.1' is percent-encoded: send the host itself"),
                ("[127.0.0.1]", "'[127.0.0.1]' is not an IPv6 address (only IPv6 goes in brackets)"),
                ("[::ffff:127.0.0.1%25lo]", "IPv6 zone identifiers are not supported: '[::ffff:127.0.0.1%25lo]'"),
                ("127.0.0.1.1", "host '127.0.0.1.1' ends in a number but is not an IPv4 address"),
                ("0x7f.0x1g.1", "host '0x7f.0x1g.1' ends in a number but is not an IPv4 address"),
                ("0.0.0.0", "host '0.0.0.0' is the unspecified address 0.0.0.0, not a destination"),
                ("0", "host '0' is the unspecified address 0.0.0.0, not a destination"),
                ("[::]", "host '[::]' is the unspecified address ::, not a destination"),
                ("127.0.0.1..", "host '127.0.0.1..' has an empty label"),
            ]
            for (host, reason) in refused {
                XCTAssertEqual(refusal(try get(proxy.port, "\(host):\(port)")), "bad request: \(reason)\n", host)
                XCTAssertEqual(refusal(try connect(proxy.port, "\(host):\(port)")), "bad request: \(reason)\n", host)
            }
            XCTAssertTrue(origin.log.requests.isEmpty)
            XCTAssertEqual(origin.log.acceptedConnections, 0)
        }
    }
}
