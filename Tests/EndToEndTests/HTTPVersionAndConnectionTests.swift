import Foundation
import ProxyModel
import XCTest

/// How the proxy manages the client connection across HTTP versions and `Connection` headers:
/// HTTP/1.0 keep-alive and close, `Connection: close` from the client, and IPv6 loopback
/// targets (bracketed authority in `Host`).
final class HTTPVersionAndConnectionTests: XCTestCase {
    /// An HTTP/1.0 request without keep-alive gets an HTTP/1.0 response and the connection
    /// closes after it.
    func testHTTP10WithoutKeepAliveCloses() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/64")) HTTP/1.0\r\nHost: \(origin.authority)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.version, "HTTP/1.0")
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.body, PatternBytes.data(count: 64))
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.httpVersion, "HTTP/1.0")
        }
    }

    /// An HTTP/1.0 client asking for keep-alive keeps its connection for a second request when
    /// the response has a length.
    func testHTTP10KeepAliveIsHonoured() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            for size in [5, 6] {
                try client.send("GET \(origin.url("/bytes/\(size)")) HTTP/1.0\r\nHost: \(origin.authority)\r\n"
                                + "Connection: keep-alive\r\n\r\n")
                let response = try client.readResponse()
                XCTAssertEqual(response.status, 200)
                XCTAssertEqual(response.header("Connection")?.lowercased(), "keep-alive")
                XCTAssertEqual(response.body, PatternBytes.data(count: size))
            }
        }
    }

    /// `Connection: close` from an HTTP/1.1 client: the response says so and the connection
    /// closes after it; the header does not reach the origin.
    func testClientConnectionCloseIsHonoured() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/32")) HTTP/1.1\r\nHost: \(origin.authority)\r\n"
                            + "Connection: close\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.header("Connection")?.lowercased(), "close")
            XCTAssertEqual(response.body, PatternBytes.data(count: 32))
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
            XCTAssertEqual(origin.log.requests.first?.values(of: "Connection"), [])
        }
    }

    /// An origin on `[::1]`: the request reaches it with a bracketed `Host`, and the flow has
    /// the bare address.
    func testIPv6LoopbackOrigin() async throws {
        let origin: TestOrigin
        do {
            origin = try await TestOrigin.start(host: "::1")
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        do {
            let proxy = try await ProxyHarness.start()
            do {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/40"))
                XCTAssertEqual(fetched.status, 200, fetched.result.summary)
                XCTAssertEqual(fetched.body, PatternBytes.data(count: 40))
                XCTAssertEqual(origin.log.requests.first?.values(of: "Host"), ["[::1]:\(origin.port)"])
                let flow = try await proxy.waitForFlows(count: 1).first
                XCTAssertEqual(flow?.host, "::1")
                XCTAssertEqual(flow?.port, origin.port)
                XCTAssertEqual(flow?.url, "http://[::1]:\(origin.port)/bytes/40")
            } catch {
                await proxy.shutdown()
                throw error
            }
            await proxy.shutdown()
        } catch {
            await origin.shutdown()
            throw error
        }
        await origin.shutdown()
    }
}
