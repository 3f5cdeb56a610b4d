import Foundation
import ProxyModel
import XCTest

/// CONNECT: `200 Connection established`, then an opaque byte relay in both directions with
/// half-close, recorded as a `.tunnel` flow with the bytes counted once the tunnel closes.
final class TunnelTests: XCTestCase {
    private func connect(_ client: RawClient, to port: Int, extra: String = "") throws -> RawResponse {
        try client.send("CONNECT 127.0.0.1:\(port) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n\(extra)")
        return try client.readResponse(noBody: true)
    }

    /// Bytes cross the tunnel both ways; the flow records the tunnel and its byte counts.
    func testConnectRelaysBytesBothWaysAndRecordsTunnel() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            let established = try connect(client, to: echo.port)
            XCTAssertEqual(established.status, 200)
            let messages = ["hello tunnel", String(repeating: "x", count: 100_000)]
            for message in messages {
                try client.send(message)
                XCTAssertEqual(try client.receive(count: message.utf8.count, timeout: 10), Data(message.utf8))
            }
            client.close()
            let flows = try await proxy.waitForFlows(count: 1)
            guard let flow = flows.first else { return XCTFail("no tunnel flow recorded after the tunnel closed") }
            let total = Int64(messages.map(\.utf8.count).reduce(0, +))
            XCTAssertEqual(flow.kind, .tunnel)
            XCTAssertEqual(flow.method, "CONNECT")
            XCTAssertEqual(flow.host, "127.0.0.1")
            XCTAssertEqual(flow.port, echo.port)
            XCTAssertEqual(flow.status, 200)
            XCTAssertEqual(flow.bytesUp, total)
            XCTAssertEqual(flow.bytesDown, total)
            XCTAssertEqual(flow.serverAddress, "127.0.0.1")
            XCTAssertNil(flow.error)
            XCTAssertNotNil(flow.finishedAt)
            XCTAssertEqual(echo.bytesReceived, Int(total))
        }
    }

    /// The CONNECT answer is `200 Connection established`, on the wire and in the flow.
    ///
    /// Regression guard: NIO's `HTTPResponseStatus(statusCode: 200, reasonPhrase:)` maps 200 to
    /// `.ok` and drops the phrase, which once made the answer read `200 OK`.
    func testConnectAnswerSaysConnectionEstablished() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            let established = try connect(client, to: echo.port)
            XCTAssertEqual(established.status, 200)
            XCTAssertEqual(established.reason, "Connection established")
            client.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.reason, "Connection established")
        }
    }

    /// Bytes sent in the same write as the CONNECT request are relayed, not held back.
    ///
    /// Regression guard: removing the request decoder hands its leftover bytes to the glue
    /// without a `channelReadComplete`; unless the glue's partner is flushed after the removal
    /// (`ClientPipelineSetup.replaceHTTPHandlers`), they wait until the client sends more. A
    /// correct relay delivers them within milliseconds; the wait is bounded at 5 s.
    func testBytesSentWithConnectRequestAreRelayed() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            let established = try connect(client, to: echo.port, extra: "early-bytes")
            XCTAssertEqual(established.status, 200)
            XCTAssertEqual(try client.receive(count: 11, timeout: 5), Data("early-bytes".utf8))
        }
    }

    /// A half-close from the client reaches the target; the target's remaining answer and its
    /// close come back.
    func testHalfCloseIsRelayed() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            XCTAssertEqual(try connect(client, to: echo.port).status, 200)
            try client.send("last words")
            client.shutdownWrite()
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the tunnel must close after the target closed")
            XCTAssertEqual(client.pending, Data("last words".utf8))
        }
    }

    /// `curl -p` tunnels a plain HTTP request through CONNECT to the origin.
    func testCurlProxytunnelReachesOrigin() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/4096"), ["-p"])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.body, PatternBytes.data(count: 4096))
            // The origin saw curl's own origin-form request, not one rewritten by the proxy.
            XCTAssertEqual(origin.log.requests.first?.uri, "/bytes/4096")
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.count, 1)
            XCTAssertEqual(flows.first?.kind, .tunnel)
            XCTAssertEqual(flows.first?.port, origin.port)
            XCTAssertGreaterThan(flows.first?.bytesDown ?? 0, 4096)
            XCTAssertGreaterThan(flows.first?.bytesUp ?? 0, 0)
        }
    }

    /// CONNECT to a port nobody listens on is answered 502 with a `Proxy-Status`.
    func testConnectToRefusedPortAnswers502() async throws {
        try await Fixture.run { proxy, _ in
            let closed = try ListeningSocket.refusing()
            defer { closed.close() }
            let client = try RawClient(port: proxy.port)
            let response = try connect(client, to: closed.port)
            XCTAssertEqual(response.status, 502)
            XCTAssertTrue(response.header("Proxy-Status")?.contains("error=connection_refused") == true,
                          "Proxy-Status: \(response.header("Proxy-Status") ?? "missing")")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.kind, .tunnel)
            XCTAssertTrue(flow?.error?.contains("connection refused") == true, "error: \(flow?.error ?? "nil")")
        }
    }
}
