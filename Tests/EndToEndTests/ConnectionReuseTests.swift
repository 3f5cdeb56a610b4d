import Foundation
import ProxyModel
import XCTest

/// Keep-alive on both sides: one client connection carries several exchanges, and the proxy
/// reuses its upstream connection to the same origin; bodiless responses (204, 304) must leave
/// both connections in sync, and a pooled connection the origin closed must not fail a request.
final class ConnectionReuseTests: XCTestCase {
    /// Two URLs in one curl run share curl's connection to the proxy and the proxy's connection
    /// to the origin; the second flow has no DNS or connect phase.
    func testKeepAliveReusesClientAndUpstreamConnections() async throws {
        try await Fixture.run { proxy, origin in
            let result = try await Curl.viaProxy(proxy.port, [
                "-w", "%{http_code} %{num_connects}\\n",
                "-o", "/dev/null", origin.url("/bytes/100"),
                "-o", "/dev/null", origin.url("/bytes/200"),
            ])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "200 1\n200 0\n", "curl must reuse its connection to the proxy")
            XCTAssertEqual(origin.log.acceptedConnections, 1, "the proxy must reuse its upstream connection")
            XCTAssertEqual(origin.log.requests.map(\.connection), [1, 1])
            let flows = try proxy.flushedFlows()
            XCTAssertEqual(flows.map(\.path), ["/bytes/100", "/bytes/200"])
            XCTAssertEqual(flows.map(\.status), [200, 200])
            XCTAssertGreaterThanOrEqual(flows.first?.timings.connect ?? -1, 0, "fresh connection: connect phase")
            XCTAssertEqual(flows.last?.timings.dns, FlowTimings.notApplicable)
            XCTAssertEqual(flows.last?.timings.connect, FlowTimings.notApplicable)
            XCTAssertEqual(flows.first?.clientAddress, flows.last?.clientAddress)
        }
    }

    /// Separate client connections (two curl runs) still share the pooled upstream connection
    /// when they land on the same event loop; in any case every request succeeds and at most one
    /// upstream connection per proxy event loop is opened for sequential requests.
    func testSequentialClientsShareUpstreamPool() async throws {
        try await Fixture.run { proxy, origin in
            for index in 1...4 {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/\(index * 10)"))
                XCTAssertEqual(fetched.status, 200, fetched.result.summary)
                XCTAssertEqual(fetched.body, PatternBytes.data(count: index * 10))
            }
            XCTAssertLessThanOrEqual(origin.log.acceptedConnections, 2, "the proxy has two event loops")
        }
    }

    /// 204 and 304 carry no body: the exchange that follows on the same connections is framed
    /// correctly.
    func testNoContentAndNotModifiedLeaveConnectionsUsable() async throws {
        try await Fixture.run { proxy, origin in
            let result = try await Curl.viaProxy(proxy.port, [
                "-w", "%{http_code} %{num_connects} %{size_download}\\n",
                "-o", "/dev/null", origin.url("/status/204"),
                "-o", "/dev/null", origin.url("/status/304"),
                "-o", "/dev/null", origin.url("/bytes/1234"),
            ])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "204 1 0\n304 0 0\n200 0 1234\n")
            XCTAssertEqual(origin.log.acceptedConnections, 1)
            let flows = try proxy.flushedFlows()
            XCTAssertEqual(flows.map(\.status), [204, 304, 200])
            XCTAssertEqual(flows.last?.responseBody.bytes, PatternBytes.data(count: 1234))
        }
    }

    /// The same over a raw connection, checking that nothing but the next response follows a
    /// 204 or a 304.
    func testNoBodyBytesFollowNoContentOrNotModified() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            for (path, status) in [("/status/204", 204), ("/status/304", 304)] {
                try client.send("GET \(origin.url(path)) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
                let response = try client.readResponse()
                XCTAssertEqual(response.status, status)
                XCTAssertNil(response.header("Transfer-Encoding"), "a \(status) must not be framed chunked")
            }
            try client.send("GET \(origin.url("/bytes/50")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let last = try client.readResponse()
            XCTAssertEqual(last.status, 200)
            XCTAssertEqual(last.body, PatternBytes.data(count: 50))
            XCTAssertTrue(client.pending.isEmpty)
        }
    }

    /// A pooled upstream connection left idle is closed after the upstream timeout; the next
    /// request opens a new one and succeeds.
    func testIdlePooledConnectionIsClosedAfterUpstreamTimeout() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let first = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/10"))
            XCTAssertEqual(first.status, 200, first.result.summary)
            // Bounded wait for the proxy to close its idle upstream connection.
            for _ in 0..<1_000 where origin.log.closedConnections == 0 {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            XCTAssertEqual(origin.log.closedConnections, 1, "the idle pooled connection was not closed")
            let second = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/20"))
            XCTAssertEqual(second.status, 200, second.result.summary)
            XCTAssertEqual(second.body, PatternBytes.data(count: 20))
            XCTAssertEqual(origin.log.acceptedConnections, 2)
        }
    }

    /// The origin closes its connection after a response without saying so; the next request
    /// must not fail because the pooled connection is dead.
    func testStalePooledConnectionIsNotUsed() async throws {
        try await Fixture.run { proxy, origin in
            let first = try await Curl.fetch(viaProxy: proxy.port, origin.url("/then-close/10"))
            XCTAssertEqual(first.status, 200, first.result.summary)
            XCTAssertEqual(first.body, PatternBytes.data(count: 10))
            let second = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/20"))
            XCTAssertEqual(second.status, 200, second.result.summary)
            XCTAssertEqual(second.body, PatternBytes.data(count: 20))
            XCTAssertEqual(origin.log.acceptedConnections, 2)
        }
    }

    /// The same in one curl run, where the second request follows the first immediately.
    func testStalePooledConnectionIsReplacedWithinOneClientConnection() async throws {
        try await Fixture.run { proxy, origin in
            let result = try await Curl.viaProxy(proxy.port, [
                "-w", "%{http_code} %{size_download}\\n",
                "-o", "/dev/null", origin.url("/then-close/10"),
                "-o", "/dev/null", origin.url("/bytes/20"),
            ])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "200 10\n200 20\n")
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/then-close/10", "/bytes/20"])
        }
    }
}
