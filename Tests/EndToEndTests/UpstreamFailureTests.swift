import Foundation
import ProxyModel
import XCTest

/// Every way the upstream side can fail, as the client sees it (status code, one-line body
/// naming what failed, RFC 9209 `Proxy-Status`) and as the capture records it (`error`).
final class UpstreamFailureTests: XCTestCase {
    /// Asserts the proxy's own error answer: status, body text and `Proxy-Status` error type.
    private func assertLocalError(_ fetched: Curl.Fetched, status: Int, bodyContains texts: [String],
                                  proxyStatusError: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary, file: file, line: line)
        XCTAssertEqual(fetched.status, status, file: file, line: line)
        for text in texts {
            XCTAssertTrue(fetched.bodyText.contains(text), "body '\(fetched.bodyText)' lacks '\(text)'",
                          file: file, line: line)
        }
        XCTAssertEqual(fetched.bodyText.filter { $0 == "\n" }.count, 1, "the body is one line", file: file, line: line)
        let proxyStatus = fetched.header("Proxy-Status") ?? ""
        XCTAssertTrue(proxyStatus.hasPrefix("ProxyApp") && proxyStatus.contains("error=\(proxyStatusError)"),
                      "Proxy-Status: '\(proxyStatus)'", file: file, line: line)
    }

    /// An unknown host: 502 naming the host and the resolver's reason. `.invalid` names fail
    /// locally, without a DNS query.
    func testUnknownHostAnswers502NamingHostAndReason() async throws {
        try await Fixture.run { proxy, _ in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://no-such-host.invalid/page")
            assertLocalError(fetched, status: 502, bodyContains: ["no-such-host.invalid", "Name or service not known"],
                             proxyStatusError: "dns_error")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.host, "no-such-host.invalid")
            XCTAssertTrue(flow?.error?.contains("cannot resolve host 'no-such-host.invalid'") == true,
                          "error: \(flow?.error ?? "nil")")
        }
    }

    /// Nobody listening: 502 "connection refused".
    func testRefusedConnectionAnswers502() async throws {
        try await Fixture.run { proxy, _ in
            let closed = try ListeningSocket.refusing()
            defer { closed.close() }
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(closed.port)/")
            assertLocalError(fetched, status: 502, bodyContains: ["connection refused by 127.0.0.1:\(closed.port)"],
                             proxyStatusError: "connection_refused")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertTrue(flow?.error?.contains("connection refused") == true, "error: \(flow?.error ?? "nil")")
        }
    }

    /// An origin whose accept queue is full never completes the handshake: 504 after the
    /// connect timeout.
    func testConnectTimeoutAnswers504() async throws {
        guard let stalled = try ListeningSocket.stalled() else {
            throw XCTSkip("this kernel completes handshakes past a full accept queue; no loopback-only way to stall a connect")
        }
        defer { stalled.close() }
        try await Fixture.run({ $0.connectTimeout = .seconds(1) }) { proxy, _ in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(stalled.port)/")
            assertLocalError(fetched, status: 504, bodyContains: ["timed out after 1s connecting to 127.0.0.1:\(stalled.port)"],
                             proxyStatusError: "connection_timeout")
        }
    }

    /// An origin that accepts the request and never answers: 504 after the upstream timeout.
    func testSilentOriginAnswers504() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/slow-headers"))
            assertLocalError(fetched, status: 504, bodyContains: ["\(origin.authority) sent nothing for 1s"],
                             proxyStatusError: "http_response_timeout")
            XCTAssertEqual(origin.log.requests.first?.uri, "/slow-headers", "the request must have reached the origin")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertTrue(flow?.error?.contains("sent nothing for 1s") == true, "error: \(flow?.error ?? "nil")")
        }
    }

    /// An upstream that answers with something that is not HTTP: 502 naming the host.
    func testNonHTTPResponseAnswers502() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/garbage"))
            assertLocalError(fetched, status: 502, bodyContains: ["invalid response from '127.0.0.1'"],
                             proxyStatusError: "http_protocol_error")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertTrue(flow?.error?.contains("invalid response") == true, "error: \(flow?.error ?? "nil")")
        }
    }

    /// The origin closes after half the announced body: the client's connection is closed too
    /// (curl reports a partial transfer, never a complete-looking body) and the flow has an error.
    func testOriginClosingMidResponseClosesClientAndRecordsError() async throws {
        try await Fixture.run { proxy, origin in
            let size = 200_000
            let file = proxy.file("partial.bin")
            let result = try await Curl.viaProxy(proxy.port, ["-o", file.path, origin.url("/close-mid/\(size)")])
            XCTAssertEqual(result.exitCode, 18, "curl must report a partial file; \(result.summary)")
            let received = (try? Data(contentsOf: file)) ?? Data()
            XCTAssertLessThan(received.count, size)
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.status, 200)
            XCTAssertEqual(flow?.responseBody.size, Int64(size / 2))
            XCTAssertTrue(flow?.error?.contains("closed the connection before a complete response") == true,
                          "error: \(flow?.error ?? "nil")")
        }
    }

    /// A large body cut short is spooled to a file as it arrives: the flow keeps every byte that
    /// came, read back from its body file, and no spool file is left behind.
    func testALargeBodyCutShortKeepsWhatArrived() async throws {
        try await Fixture.run { proxy, origin in
            let size = 3_000_000
            let result = try await Curl.viaProxy(proxy.port, ["-o", "/dev/null", origin.url("/close-mid/\(size)")])
            XCTAssertEqual(result.exitCode, 18, result.summary)
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertNotNil(flow?.error)
            XCTAssertEqual(flow?.responseBody.size, Int64(size / 2))
            XCTAssertTrue(flow?.responseBody.bytes == PatternBytes.data(count: size / 2), "the captured part differs")
            let store = proxy.repository.database.bodyFiles.directory
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store).filter { $0 != "spool" }.count, 1)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store + "/spool"), [])
        }
    }

    /// The same over a raw connection: the proxy closes the client connection after the
    /// partial body rather than leaving it waiting.
    func testOriginClosingMidResponseClosesRawClient() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/close-mid/100000")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the client connection must be closed")
            XCTAssertNil(try RawResponse.parse(client.pending), "a complete response must not be framed")
        }
    }

    /// A response found malformed after its head went out (a bad chunk size in the same read
    /// as the head) reaches the client as far as it went, then the connection closes: the client
    /// sees a truncated response, as the flow records it. Closing before flushing left it a bare
    /// close while the flow said 200.
    func testResponseMalformedAfterItsHeadArrivesTruncated() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bad-chunk")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the client connection must be closed")
            let received = String(decoding: client.pending, as: UTF8.self)
            XCTAssertTrue(received.hasPrefix("HTTP/1.1 200 OK\r\n"), received)
            XCTAssertTrue(received.hasSuffix("\r\n\r\n2\r\nok\r\n"), received)
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.status, 200)
            XCTAssertTrue(flow?.error?.contains("invalid chunk size") == true, "error: \(flow?.error ?? "nil")")
            XCTAssertTrue(flow?.error?.contains("(response incomplete)") == true, "error: \(flow?.error ?? "nil")")
        }
    }

    /// After an upstream failure answered with a keep-alive 502, the same client connection
    /// serves the next request.
    func testClientConnectionIsUsableAfterUpstreamFailure() async throws {
        try await Fixture.run { proxy, origin in
            let result = try await Curl.viaProxy(proxy.port, [
                "-w", "%{http_code} %{num_connects}\\n",
                "-o", "/dev/null", "http://no-such-host.invalid/",
                "-o", "/dev/null", origin.url("/bytes/3"),
            ])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "502 1\n200 0\n")
        }
    }
}
