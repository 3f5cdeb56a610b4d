import Foundation
import ProxyModel
import XCTest

/// What the proxy does with clients that send something it cannot use (malformed requests,
/// oversized header sections, unsupported targets) or nothing at all (idle connections).
final class ClientErrorTests: XCTestCase {
    /// Garbage instead of a request line: 400 with `Proxy-Status`, connection closed; the
    /// proxy keeps serving new connections.
    func testMalformedRequestAnswers400AndCloses() async throws {
        try await Fixture.run { proxy, origin in
            let bad = try RawClient(port: proxy.port)
            try bad.send("this is not http\r\n\r\n")
            let response = try bad.readResponse()
            XCTAssertEqual(response.status, 400)
            XCTAssertTrue(response.bodyText.hasPrefix("bad request: malformed request: "), response.bodyText)
            XCTAssertTrue(response.header("Proxy-Status")?.contains("error=http_request_error") == true)
            XCTAssertEqual(response.header("Connection")?.lowercased(), "close")
            XCTAssertTrue(try bad.readUntilClose(timeout: 10), "the connection must be closed after a 400")

            let good = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/5"))
            XCTAssertEqual(good.status, 200, good.result.summary)
            XCTAssertEqual(good.body, PatternBytes.data(count: 5))
        }
    }

    /// A request target the HTTP parser accepts but the proxy cannot use (an `ftp://` URL):
    /// 400 naming the problem, connection closed.
    func testUnsupportedSchemeAnswers400() async throws {
        try await Fixture.run { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("GET ftp://127.0.0.1/file HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 400)
            XCTAssertTrue(response.bodyText.contains("unsupported URL scheme 'ftp'"), response.bodyText)
            XCTAssertTrue(response.header("Proxy-Status")?.contains("error=http_request_error") == true)
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
        }
    }

    /// A CONNECT target without a port: 400, with the reason in `Proxy-Status` (NIO's encoder
    /// sends responses to CONNECT without a body), then the connection closes.
    func testConnectWithoutPortAnswers400() async throws {
        try await Fixture.run { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("CONNECT 127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try client.readResponse(noBody: true)
            XCTAssertEqual(response.status, 400)
            let proxyStatus = response.header("Proxy-Status") ?? ""
            XCTAssertTrue(proxyStatus.contains("error=http_request_error") && proxyStatus.contains("needs a port"),
                          "Proxy-Status: '\(proxyStatus)'")
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
        }
    }

    /// An absolute `https://` URL without CONNECT: 501, since it cannot be forwarded in plain.
    func testHTTPSURLWithoutConnectAnswers501() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET https://\(origin.authority)/ HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 501)
            XCTAssertTrue(response.bodyText.contains("CONNECT"), response.bodyText)
            XCTAssertTrue(response.header("Proxy-Status")?.contains("error=http_request_error") == true)
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// A header section over 64 KiB: 431, connection closed, nothing forwarded.
    func testOversizedHeaderSectionAnswers431() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let big = String(repeating: "a", count: 70 * 1024)
            try client.send("GET \(origin.url("/headers")) HTTP/1.1\r\nHost: \(origin.authority)\r\nX-Big: \(big)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 431)
            XCTAssertTrue(response.bodyText.contains("larger than 64 KiB"), response.bodyText)
            XCTAssertTrue(response.header("Proxy-Status")?.contains("error=http_request_error") == true)
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// Many headers that together exceed 64 KiB are refused the same way.
    func testManyHeadersOverLimitAnswer431() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let headers = (0..<800).map { "X-Header-\($0): \(String(repeating: "v", count: 90))\r\n" }.joined()
            try client.send("GET \(origin.url("/headers")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\(headers)\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 431)
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// A header section just under the limit is forwarded.
    func testLargeHeaderUnderLimitIsForwarded() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let value = String(repeating: "b", count: 60 * 1024)
            try client.send("GET \(origin.url("/bytes/1")) HTTP/1.1\r\nHost: \(origin.authority)\r\nX-Big: \(value)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(origin.log.requests.first?.values(of: "X-Big"), [value])
        }
    }

    /// Ambiguous body framing (both `Content-Length` and chunked, or two `Content-Length`s) is
    /// refused with 400 and never reaches the origin, so no request can be smuggled past it.
    func testAmbiguousBodyFramingIsRefused() async throws {
        try await Fixture.run { proxy, origin in
            let requests = [
                "POST \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\nContent-Length: 4\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                "POST \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\nContent-Length: 3\r\n"
                    + "Content-Length: 5\r\n\r\nabcde",
            ]
            for request in requests {
                let client = try RawClient(port: proxy.port)
                try client.send(request)
                let response = try client.readResponse()
                XCTAssertEqual(response.status, 400, response.bodyText)
                XCTAssertTrue(try client.readUntilClose(timeout: 10))
            }
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// A client that connects and sends nothing is disconnected after the idle timeout.
    func testIdleClientConnectionIsClosed() async throws {
        try await Fixture.run({ $0.clientIdleTimeout = .seconds(1) }) { proxy, _ in
            let client = try RawClient(port: proxy.port)
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the idle connection must be closed")
            XCTAssertTrue(client.pending.isEmpty, "nothing is sent on an idle close")
        }
    }

    /// A client that sends part of the HTTP/2 preface and then nothing is closed after the idle
    /// timeout too: the listener's first-bytes check never holds a connection for good.
    func testPartialHTTP2PrefaceIsClosedAfterTheIdleTimeout() async throws {
        try await Fixture.run({ $0.clientIdleTimeout = .seconds(1) }) { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("PRI * HTTP/2.0\r\n")
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the stalled preface must be closed")
        }
    }

    /// A keep-alive connection that goes idle after an exchange is closed too.
    func testIdleKeepAliveConnectionIsClosedAfterExchange() async throws {
        try await Fixture.run({ $0.clientIdleTimeout = .seconds(1) }) { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/10")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            XCTAssertEqual(try client.readResponse().status, 200)
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the idle connection must be closed")
        }
    }

    /// A client that resets its connection while the origin is still thinking: the exchange
    /// is recorded with an error saying the client left.
    func testClientResetMidExchangeIsRecorded() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/slow-headers")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            try await waitUntilOriginHasRequests(origin)
            client.abort()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.path, "/slow-headers")
            XCTAssertNil(flow?.status)
            XCTAssertTrue(flow?.error?.contains("client closed") == true, "error: \(flow?.error ?? "nil")")
        }
    }

    /// A client that closes (FIN) while the origin is still thinking: a FIN is only a
    /// half-close, so the exchange may go on, but it still ends (here by the upstream timeout)
    /// and is recorded with an error.
    func testClientClosingMidExchangeIsStillRecorded() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/slow-headers")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            try await waitUntilOriginHasRequests(origin)
            client.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.path, "/slow-headers")
            XCTAssertNotNil(flow?.error)
        }
    }

    /// Waits (at most 5 s) until the origin has received a request.
    private func waitUntilOriginHasRequests(_ origin: TestOrigin) async throws {
        for _ in 0..<500 where origin.log.requests.isEmpty {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertFalse(origin.log.requests.isEmpty, "the request never reached the origin")
    }
}
