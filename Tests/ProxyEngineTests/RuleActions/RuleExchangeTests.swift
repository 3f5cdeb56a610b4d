import NIOCore
import NIOEmbedded
import NIOHTTP1
import ProxyModel
import Rules
import RulesFile
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// Rules acting on the client pipeline, as transcripts: what the client sends, what reaches
/// the origin (if anything), what the client gets, and the flow recorded.
final class RuleExchangeTests: XCTestCase {
    /// A block rule answers 403 itself (its name in the body and in Proxy-Status), never dials
    /// the origin, reads the request body to its end and records it, and keeps the connection.
    func testBlockAnswersLocallyAndRecordsTheRequest() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - name: No ads
                match: { host: "*.ads.test" }
                block: {}
            """)
        try harness.clientSends("POST http://x.ads.test/track HTTP/1.1\r\nHost: x.ads.test\r\nContent-Length: 5\r\n\r\nab")
        XCTAssertEqual(try harness.clientReceived(), "", "the answer waits for the whole request")
        try harness.clientSends("cde")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), answer)
        XCTAssertTrue(answer.contains("Proxy-Status: ProxyApp; error=http_request_denied; details=\"blocked by rule 'No ads'\"\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("\r\n\r\nblocked by ProxyApp rule 'No ads'\n"), answer)
        XCTAssertTrue(harness.connector.connects.isEmpty)
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.status, 403)
        XCTAssertEqual(flow.appliedRules, ["No ads"])
        XCTAssertEqual(flow.note, "blocked by rule 'No ads'")
        XCTAssertEqual(flow.requestBody.bytes, Data("abcde".utf8))
        XCTAssertEqual(flow.responseBody.bytes, Data("blocked by ProxyApp rule 'No ads'\n".utf8))
        XCTAssertNil(flow.error)

        // The next request on the same connection goes through: the rule matched only that host.
        try harness.clientSends("GET http://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map(\.host), ["ok.test"])
    }

    /// A block rule's own status, body and headers are what the client gets; a HEAD gets none
    /// of the body.
    func testBlockWithItsOwnStatusBodyAndHeaders() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test, method: [HEAD, DELETE] }
                block: { status: 451, body: "not here", headers: { X-Why: legal } }
            """)
        try harness.clientSends("DELETE http://api.test/a HTTP/1.1\r\nHost: api.test\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 451 Unavailable For Legal Reasons\r\nX-Why: legal\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("Content-Length: 8\r\nConnection: keep-alive\r\n\r\nnot here"), answer)
        try harness.clientSends("HEAD http://api.test/a HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasSuffix("Content-Length: 8\r\nConnection: keep-alive\r\n\r\n"))
        try harness.clientSends("GET http://api.test/a HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 1, "GET is not in the rule's methods")
        XCTAssertEqual(harness.sink.flows.map(\.appliedRules), [["block #1"], ["block #1"]])
    }

    /// A CONNECT to a blocked host is refused with the rule's status (the reason in
    /// Proxy-Status: a CONNECT answer has no body) and recorded as a tunnel that never opened.
    func testBlockRefusesConnect() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - name: Nope
                match: { host: "*.blocked.test", port: 443 }
                block: {}
            """)
        try harness.clientSends("CONNECT www.blocked.test:443 HTTP/1.1\r\nHost: www.blocked.test:443\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), answer)
        XCTAssertTrue(answer.contains("details=\"blocked by rule 'Nope'\""), answer)
        XCTAssertTrue(harness.connector.connects.isEmpty)
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.kind, .tunnel)
        XCTAssertEqual(flow.status, 403)
        XCTAssertEqual(flow.appliedRules, ["Nope"])
        XCTAssertFalse(harness.client.isActive, "nothing can follow a CONNECT on the connection")

        // Another port of the same host is not refused.
        let other = try EngineHarness(rules: "rules: [ { match: { host: '*.blocked.test', port: 443 }, block: {} } ]")
        try other.clientSends("CONNECT www.blocked.test:8443 HTTP/1.1\r\nHost: www.blocked.test:8443\r\n\r\n")
        XCTAssertEqual(other.connector.connects.map(\.port), [8443])
    }

    /// A block rule with a path cannot be decided at CONNECT time: the CONNECT goes through.
    func testBlockWithPathDoesNotRefuseConnect() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: "*.blocked.test", path: /ads/* }
                block: {}
            """)
        try harness.clientSends("CONNECT www.blocked.test:443 HTTP/1.1\r\nHost: www.blocked.test:443\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map(\.host), ["www.blocked.test"])
    }

    /// map_remote sends the request to the destination: host, port, path prefix, Host header;
    /// the flow keeps the client's URL and says where it went.
    func testMapRemoteChangesTargetAndHost() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - name: staging
                match: { host: api.test, path: /v1/* }
                map_remote: { to: "http://staging.test:8080/v2/" }
            """)
        try harness.clientSends("GET http://api.test/v1/users?id=3 HTTP/1.1\r\nHost: api.test\r\nAccept: */*\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map { "\($0.host):\($0.port)" }, ["staging.test:8080"])
        XCTAssertEqual(try harness.originReceived(),
                       "GET /v2/users?id=3 HTTP/1.1\r\nHost: staging.test:8080\r\nAccept: */*\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertTrue(try harness.clientReceived().hasSuffix("\r\n\r\nok"))
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.url, "http://api.test/v1/users?id=3")
        XCTAssertEqual(flow.appliedRules, ["staging"])
        XCTAssertEqual(flow.note, "map_remote: sent to http://staging.test:8080/v2/users?id=3")
    }

    /// `preserve_host` keeps the client's Host header while connecting elsewhere.
    func testMapRemotePreservesHost() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test }
                map_remote: { to: "http://10.0.0.5:9000", preserve_host: true }
            """)
        try harness.clientSends("GET http://api.test/x HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map { "\($0.host):\($0.port)" }, ["10.0.0.5:9000"])
        XCTAssertEqual(try harness.originReceived(), "GET /x HTTP/1.1\r\nHost: api.test\r\n\r\n")
    }

    /// A dns rule hands its addresses to the connector; the Host header stays the name, and
    /// connections made under the override are pooled apart from resolved ones.
    func testDNSOverrideGoesToTheConnector() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - name: dev box
                match: { host: "*.dev.test" }
                dns: { to: ["127.0.0.2", "::1"] }
            """)
        try harness.clientSends("GET http://a.dev.test/ HTTP/1.1\r\nHost: a.dev.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connectAddresses.last, ["127.0.0.2", "::1"])
        XCTAssertEqual(try harness.originReceived(), "GET / HTTP/1.1\r\nHost: a.dev.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 204 No Content\r\n\r\n")
        _ = try harness.clientReceived()
        XCTAssertEqual(harness.sink.flows.first?.appliedRules, ["dev box"])

        try harness.clientSends("GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connectAddresses.last, .some(nil))
    }

    /// Request header edits reach the origin; response status and header edits reach the
    /// client, and the flow records what the client got.
    func testRewriteHeadersAndStatus() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - name: debug
                match: { host: api.test }
                rewrite:
                  request_headers: { remove: [Cookie], set: { Accept: application/json }, add: { X-Debug: "1" } }
                  response_headers: { set: { Cache-Control: no-store }, remove: [Server] }
                  status: 299
            """)
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\nCookie: a=1\r\nAccept: */*\r\nAccept: text/html\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(),
                       "GET / HTTP/1.1\r\nHost: api.test\r\nAccept: application/json\r\nX-Debug: 1\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nServer: origin\r\nCache-Control: max-age=60\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(try harness.clientReceived(),
                       "HTTP/1.1 299 \r\nContent-Length: 2\r\nCache-Control: no-store\r\n\r\nok")
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.status, 299)
        XCTAssertEqual(flow.responseHeaders.map(\.name), ["Content-Length", "Cache-Control"])
        XCTAssertEqual(flow.requestHeaders.first(named: "Cookie"), "a=1", "the flow keeps what the client sent")
        XCTAssertEqual(flow.appliedRules, ["debug"])
    }

    /// A response body rewrite holds the response (chunked here) until it ends, then sends the
    /// replaced text with a Content-Length; the flow holds the text the client got.
    func testRewriteResponseBody() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test }
                rewrite:
                  response_body: [ { find: "red", replace: "blue" }, { regex: "v([0-9]+)", replace: "version-$1" } ]
            """)
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n")
        _ = try harness.originReceived()
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nred v2\r\n")
        XCTAssertEqual(try harness.clientReceived(), "", "held until the body ends")
        try harness.originSends("4\r\n red\r\n0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(),
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 19\r\n\r\nblue version-2 blue")
        XCTAssertEqual(harness.sink.flows.first?.responseBody.bytes, Data("blue version-2 blue".utf8))
        XCTAssertNil(harness.sink.flows.first?.note)

        // The connection is pooled again and serves the next request.
        try harness.clientSends("GET http://api.test/2 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 1)
    }

    /// A binary response is not rewritten: it passes as it came, and the flow says why.
    func testRewriteSkipsBinaryBodies() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test }
                rewrite: { response_body: [ { find: "red", replace: "blue" } ] }
            """)
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nred")
        XCTAssertTrue(try harness.clientReceived().hasSuffix("\r\n\r\nred"))
        XCTAssertEqual(harness.sink.flows.first?.note, "rewrite: response body not rewritten: not text (image/png)")
    }

    /// A response body past the rewrite limit is released unchanged and streamed on.
    func testRewriteGivesUpOnLargeBodies() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test }
                rewrite: { response_body: [ { find: "a", replace: "b" } ] }
            """) { $0.maxCapturedBodyBytes = 1 << 10 }
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n")
        let size = (1 << 20) + 10
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(size)\r\n\r\n")
        try harness.originSends(String(repeating: "a", count: size - 5))
        let first = try harness.clientReceived()
        XCTAssertTrue(first.hasPrefix("HTTP/1.1 200 OK\r\n"), "released once past 1 MiB")
        try harness.originSends("aaaaa")
        let rest = try harness.clientReceived()
        XCTAssertEqual((first + rest).filter { $0 == "b" }.count, 0)
        XCTAssertEqual(harness.sink.flows.first?.note, "rewrite: response body over 1 MiB, not rewritten")
    }

    /// A request body rewrite answers the client's Expect itself, holds the body to its end and
    /// sends it replaced with a Content-Length (no Expect upstream).
    func testRewriteRequestBody() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test, method: POST }
                rewrite: { request_body: [ { find: "secret", replace: "xxxxx" } ] }
            """)
        try harness.clientSends(
            "POST http://api.test/form HTTP/1.1\r\nHost: api.test\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 13\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 100 Continue\r\n\r\n")
        XCTAssertTrue(harness.connector.connects.isEmpty, "no upstream connection before the body is whole")
        try harness.clientSends("my secret")
        try harness.clientSends(" now")
        XCTAssertEqual(try harness.originReceived(),
                       "POST /form HTTP/1.1\r\nHost: api.test\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nmy xxxxx now")
        try harness.originSends("HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 204"))
        XCTAssertEqual(harness.sink.flows.first?.requestBody.bytes, Data("my secret now".utf8))
    }

    /// Rules swapped while an exchange runs do not change it; the next request gets the new ones.
    func testReloadAppliesToNewRequestsOnly() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: api.test }
                rewrite: { response_headers: { add: { X-Generation: "1" } } }
            """)
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n")
        harness.rules.replace(with: try RulesFile.parse("""
            rules:
              - match: { host: api.test }
                block: {}
            """, file: "rules.yml", baseDirectory: "/"), source: "rules.yml")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().contains("X-Generation: 1\r\n"))
        try harness.clientSends("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 403"))
    }
}

extension RuleExchangeTests {
    /// A block rule with 204 answers without a body (no Content-Length, no text), and the
    /// connection carries the next request.
    func testBlockWithNoContent() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: pixel.test }
                block: { status: 204 }
            """)
        try harness.clientSends("GET http://pixel.test/p.gif HTTP/1.1\r\nHost: pixel.test\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 204 No Content\r\nProxy-Status: ProxyApp; error=http_request_denied; details=\"blocked by rule 'block #1'\"\r\nConnection: keep-alive\r\n\r\n")
        try harness.clientSends("GET http://pixel.test/p.gif HTTP/1.1\r\nHost: pixel.test\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 204 No Content\r\n"))
        XCTAssertEqual(harness.sink.flows.count, 2)
        XCTAssertEqual(harness.sink.flows.first?.responseBody.size, 0)
    }
}
