import Foundation
import ProxyModel
import TestSupport
import XCTest

/// HTTP/2 between a decrypted client and the proxy, with curl: each stream is an exchange of its
/// own (captured as `HTTP/2.0`, ALPN `h2`), many streams share one connection, bodies go both
/// ways whole, rules answer on the stream, and `--no-http2` keeps clients on HTTP/1.1. The
/// origin side is HTTP/1.1 (`TestOrigin`).
final class HTTP2ClientTests: XCTestCase {
    private func trustProxy(_ fixture: InterceptingFixture) -> [String] {
        ["--http2", "--cacert", fixture.tls.proxyCAFile.path]
    }

    /// curl offering h2 fetches `path` from the HTTPS origin and prints `format` (`-w`).
    private func fetch(_ path: String, writingOut format: String, _ fixture: InterceptingFixture) async throws -> Curl.Result {
        try await Curl.viaProxy(fixture.proxy.port,
                                trustProxy(fixture) + ["-o", "/dev/null", "-w", format, fixture.tlsURL(path)])
    }

    /// A client offering h2 gets HTTP/2; the flow says so, and the origin got HTTP/1.1 with the
    /// client's `:authority` as its Host.
    func testClientOfferingH2GetsHTTP2AndTheFlowSaysSo() async throws {
        try await InterceptingFixture.run { fixture in
            let result = try await fetch("/bytes/1000", writingOut: "%{http_version} %{http_code} %{size_download}", fixture)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "2 200 1000")
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.httpVersion, "HTTP/2.0")
            XCTAssertEqual(flow?.tls?.alpn, "h2")
            XCTAssertEqual(flow?.status, 200)
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertNil(flow?.error ?? nil)
            let request = fixture.tlsOrigin.log.requests.last
            XCTAssertEqual(request?.version, "HTTP/1.1")
            XCTAssertEqual(request?.headers.first(named: "host"), "localhost:\(fixture.tlsOrigin.port)")
        }
    }

    /// `--no-http2`: the same client is answered over HTTP/1.1.
    func testNoHTTP2KeepsClientsOnHTTP1() async throws {
        try await InterceptingFixture.run(offersHTTP2: false) { fixture in
            let result = try await fetch("/bytes/10", writingOut: "%{http_version} %{http_code}", fixture)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "1.1 200")
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.tls?.alpn, "http/1.1")
        }
    }

    /// Twenty transfers multiplexed on one connection (`curl -Z`), of different sizes so their
    /// DATA frames interleave: every one complete, each its own flow, all from one client
    /// connection.
    func testTwentyStreamsOnOneConnection() async throws {
        try await InterceptingFixture.run { fixture in
            var arguments = trustProxy(fixture) + ["-Z", "--parallel-max", "20", "-w", "%{http_version} %{http_code} %{size_download}\n"]
            for index in 0..<20 {
                arguments += ["-o", "/dev/null", fixture.tlsURL("/bytes/\(1000 + index * 7919)")]
            }
            let result = try await Curl.viaProxy(fixture.proxy.port, arguments, timeout: 30)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let lines = result.stdoutText.split(separator: "\n").map(String.init).sorted()
            let expected = (0..<20).map { "2 200 \(1000 + $0 * 7919)" }.sorted()
            XCTAssertEqual(lines, expected)
            let flows = try await fixture.proxy.waitForFlows(count: 20)
            XCTAssertEqual(flows.count, 20)
            XCTAssertEqual(Set(flows.map(\.clientAddress)).count, 1, "one client connection carried every stream")
            XCTAssertEqual(Set(flows.map(\.path)).count, 20)
            XCTAssertTrue(flows.allSatisfy { $0.httpVersion == "HTTP/2.0" && $0.status == 200 && $0.error == nil })
        }
    }

    /// A 5 MiB POST on a stream reaches the origin whole (its checksum), and a 5 MiB download
    /// reaches the client whole (flow control on the stream, back-pressure to the origin).
    func testLargePostEchoedWhole() async throws {
        try await InterceptingFixture.run { fixture in
            let scratch = try TemporaryDirectory("proxyapp-h2-post")
            defer { scratch.remove() }
            let count = 5 << 20
            let upload = scratch.url.appendingPathComponent("upload")
            try PatternBytes.writeFile(upload, count: count)
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture) + ["--data-binary", "@\(upload.path)", "-H", "Content-Type: application/octet-stream",
                                       "-o", "/dev/null", "-D", "-", "-w", "\n%{http_version} %{http_code}",
                                       fixture.tlsURL("/echo")], timeout: 60)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertTrue(result.stdoutText.hasSuffix("2 200"), result.stdoutText)
            XCTAssertTrue(result.stdoutText.lowercased().contains("x-echo-body-checksum: \(Checksum.ofPattern(count: count).hex)"),
                          result.stdoutText)

            let downloaded = scratch.url.appendingPathComponent("downloaded")
            let download = try await Curl.viaProxy(
                fixture.proxy.port, trustProxy(fixture) + ["-o", downloaded.path, fixture.tlsURL("/bytes/\(count)")], timeout: 60)
            XCTAssertEqual(download.exitCode, 0, download.summary)
            XCTAssertNil(try PatternBytes.firstMismatch(inFile: downloaded, expectedCount: count))
        }
    }

    /// An origin's `100 Continue` reaches an h2 client that sent `Expect: 100-continue`.
    func testExpectContinueOverHTTP2() async throws {
        try await InterceptingFixture.run { fixture in
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture) + ["-v", "-H", "Expect: 100-continue", "--data-binary", "hello", "-o", "/dev/null",
                                       "-w", "%{http_version} %{http_code}", fixture.tlsURL("/expect")])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "2 200")
            XCTAssertTrue(result.stderr.contains("< HTTP/2 100"), result.stderr)
        }
    }

    /// Cookies an h2 client sends as separate fields reach the HTTP/1.1 origin as one `Cookie`
    /// field (RFC 9113 §8.2.3); hop-by-hop fields of the origin's response never reach the h2
    /// client (they are not allowed there, and curl would refuse the response).
    func testCookiesJoinedAndConnectionFieldsDropped() async throws {
        try await InterceptingFixture.run { fixture in
            let headers = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/headers"),
                                               trustProxy(fixture) + ["-H", "Cookie: a=1", "-H", "Cookie: b=2"])
            XCTAssertEqual(headers.status, 200, headers.result.summary)
            let cookieLines = headers.bodyText.split(separator: "\n").filter { $0.lowercased().hasPrefix("cookie:") }
            XCTAssertEqual(cookieLines, ["Cookie: a=1; b=2"], headers.bodyText)

            let hop = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/hop-response"), trustProxy(fixture))
            XCTAssertEqual(hop.status, 200, hop.result.summary)
            XCTAssertNil(hop.header("connection"))
            XCTAssertNil(hop.header("keep-alive"))
            XCTAssertNil(hop.header("x-resp-hop"))
            XCTAssertEqual(hop.header("x-end-to-end"), "kept")
            XCTAssertEqual(hop.values(of: "set-cookie"), ["a=1; Path=/", "b=2; Path=/"])
        }
    }

    /// A block rule answers on its stream; another stream of the same connection still reaches
    /// the origin.
    func testRulesApplyPerStream() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: Private API
                    match: { host: localhost, path: /private/* }
                    block: { status: 404, body: "gone" }
                """)
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture) + ["-Z", "-w", "%{http_code} %{url_effective}\n",
                                       "-o", "/dev/null", fixture.tlsURL("/private/keys"),
                                       "-o", "/dev/null", fixture.tlsURL("/bytes/10")])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let lines = Set(result.stdoutText.split(separator: "\n").map(String.init))
            XCTAssertEqual(lines, ["404 \(fixture.tlsURL("/private/keys"))", "200 \(fixture.tlsURL("/bytes/10"))"])
            XCTAssertEqual(fixture.tlsOrigin.log.requests.map(\.uri), ["/bytes/10"])
            let flows = try await fixture.proxy.waitForFlows(count: 2)
            XCTAssertEqual(Set(flows.map(\.appliedRules)), [["Private API"], []])
        }
    }

    /// h2c with prior knowledge sent to the proxy's own port: its streams are requests to the proxy
    /// itself (the CA page), served over HTTP/2; an HTTP/1 client on the same port is unaffected,
    /// and a request starting like the preface but not it (`PRISM`) stays HTTP/1.
    func testPriorKnowledgeToTheProxyPort() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let page = "http://127.0.0.1:\(fixture.proxy.port)/ProxyCA.cer"
            let h2 = try await Curl.viaProxy(fixture.proxy.port, ["--noproxy", "*", "--http2-prior-knowledge", "-o", "/dev/null",
                                                                  "-w", "%{http_version} %{http_code} %{size_download}", page])
            XCTAssertEqual(h2.exitCode, 0, h2.summary)
            XCTAssertEqual(h2.stdoutText, "2 200 \(fixture.tls.proxyCA.certificateDER.count)")
            let h1 = try await Curl.viaProxy(fixture.proxy.port, ["--noproxy", "*", "-o", "/dev/null",
                                                                  "-w", "%{http_version} %{http_code}", page])
            XCTAssertEqual(h1.stdoutText, "1.1 200", h1.summary)
            let client = try RawClient(port: fixture.proxy.port)
            try client.send("PRISM / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            XCTAssertTrue(try client.readResponse().status >= 400, "an unknown method answered over HTTP/1")
        }
    }

    /// Cleartext HTTP/2 with prior knowledge through a CONNECT tunnel (`-p`): served as HTTP/2,
    /// captured as plain http; with `--no-http2` the tunnel is relayed and the origin (which
    /// speaks only HTTP/1.1) refuses it.
    func testPriorKnowledgeInsideATunnel() async throws {
        try await InterceptingFixture.run { fixture in
            let url = "http://127.0.0.1:\(fixture.origin.port)/bytes/100"
            let result = try await Curl.viaProxy(
                fixture.proxy.port, ["--http2-prior-knowledge", "-p", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "2 200")
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.scheme, "http")
            XCTAssertEqual(flow?.httpVersion, "HTTP/2.0")
            XCTAssertEqual(flow?.path, "/bytes/100")
        }
        try await InterceptingFixture.run(offersHTTP2: false) { fixture in
            let url = "http://127.0.0.1:\(fixture.origin.port)/bytes/100"
            let result = try await Curl.viaProxy(
                fixture.proxy.port, ["--http2-prior-knowledge", "-p", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url],
                timeout: 10)
            XCTAssertNotEqual(result.stdoutText, "2 200", "served as HTTP/2 despite --no-http2")
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.kind, .tunnel)
            XCTAssertEqual(flow?.note, "cleartext HTTP/2 relayed undecoded: --no-http2")
        }
    }
}
