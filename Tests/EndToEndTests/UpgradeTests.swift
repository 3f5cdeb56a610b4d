import Foundation
import ProxyModel
import XCTest

/// Protocol upgrades (WebSocket handshakes): the proxy forwards `Upgrade`, relays the origin's
/// `101`, then relays raw bytes both ways; the flow records the handshake with status 101.
final class UpgradeTests: XCTestCase {
    private func upgradeRequest(_ origin: TestOrigin, path: String = "/upgrade") -> String {
        "GET \(origin.url(path)) HTTP/1.1\r\nHost: \(origin.authority)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    /// The handshake reaches the origin with its upgrade headers, 101 comes back, and bytes are
    /// echoed through the upgraded connection.
    func testWebSocketUpgradeSwitchesToByteRelay() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send(upgradeRequest(origin))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 101)
            XCTAssertEqual(response.header("Upgrade")?.lowercased(), "websocket")
            XCTAssertEqual(response.header("Connection")?.lowercased(), "upgrade")
            for message in ["frame-one", String(repeating: "y", count: 50_000)] {
                try client.send(message)
                XCTAssertEqual(try client.receive(count: message.utf8.count, timeout: 10), Data(message.utf8))
            }
            let request = origin.log.requests.first
            XCTAssertEqual(request?.values(of: "Upgrade"), ["websocket"])
            XCTAssertTrue(request?.values(of: "Connection").contains { $0.lowercased().contains("upgrade") } == true)
            XCTAssertEqual(request?.values(of: "Sec-WebSocket-Version"), ["13"])
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.status, 101)
            XCTAssertEqual(flow?.method, "GET")
            XCTAssertEqual(flow?.path, "/upgrade")
            XCTAssertEqual(flow?.kind, .http)
        }
    }

    /// A server that speaks first: bytes the origin sends in the same segment as its 101 reach
    /// the client.
    ///
    /// Regression guard: the response decoder hands its leftover bytes to the glue after the
    /// read cycle ended; `UpstreamHTTPHandler.removePipeline` must flush them, or the greeting
    /// waits until the origin sends more. Same mechanism as
    /// `TunnelTests.testBytesSentWithConnectRequestAreRelayed`; the wait is bounded at 5 s.
    func testBytesSentByOriginWithThe101AreRelayed() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send(upgradeRequest(origin, path: "/upgrade-greet"))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 101)
            let greeting = OriginHandler.greeting
            XCTAssertEqual(try client.receive(count: greeting.utf8.count, timeout: 5), Data(greeting.utf8))
        }
    }

    /// An upgrade that is not the first request on the client connection (and goes over the
    /// pooled upstream connection of the first) still switches to a byte relay.
    func testUpgradeAfterEarlierRequestOnSameConnection() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/5")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            XCTAssertEqual(try client.readResponse().body, PatternBytes.data(count: 5))
            try client.send(upgradeRequest(origin))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 101)
            try client.send("after-reuse")
            XCTAssertEqual(try client.receive(count: 11, timeout: 5), Data("after-reuse".utf8))
        }
    }

    /// Closing the client side of an upgraded connection closes the relay.
    func testClosingUpgradedConnectionEndsRelay() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send(upgradeRequest(origin))
            XCTAssertEqual(try client.readResponse().status, 101)
            try client.send("bye")
            XCTAssertEqual(try client.receive(count: 3, timeout: 10), Data("bye".utf8))
            client.shutdownWrite()
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the relay must close once the origin closed")
        }
    }

    /// An origin that ignores the upgrade and answers normally: the client gets that answer and
    /// the connection ends (its request parser stopped at the upgrade request).
    func testUpgradeDeclinedByOriginIsAnsweredAndClosed() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send(upgradeRequest(origin, path: "/bytes/12"))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.body, PatternBytes.data(count: 12))
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
        }
    }
}
