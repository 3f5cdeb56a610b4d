import NIOCore
import NIOEmbedded
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// WebSocket upgrades: the handshake is forwarded with its upgrade headers, and after 101 both
/// connections become a byte relay.
final class UpgradeTests: XCTestCase {
    func testWebSocketHandshakeThenRelay() throws {
        let harness = try EngineHarness()
        try harness.clientSends(
            "GET http://ws.test/chat HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let sent = try harness.originReceived()
        XCTAssertTrue(sent.contains("Upgrade: websocket\r\n"), sent)
        XCTAssertTrue(sent.contains("Connection: upgrade\r\n"), sent)

        try harness.originSends(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\nserver-first")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), answer)
        XCTAssertTrue(answer.contains("Upgrade: websocket\r\n"))
        XCTAssertTrue(answer.contains("Connection: upgrade\r\n"))
        XCTAssertTrue(answer.hasSuffix("\r\n\r\nserver-first"), "bytes behind the 101 are relayed: \(answer)")

        try harness.clientSends("\u{81}\u{02}hi")
        XCTAssertEqual(try EngineHarness.drainRaw(harness.upstream!), "\u{81}\u{02}hi")
        XCTAssertEqual(harness.sink.flows.first?.status, 101)
    }

    /// A refused upgrade is answered normally, and the connection closes afterwards.
    func testRefusedUpgradeClosesAfterResponse() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://ws.test/ HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        try harness.originSends("HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
        XCTAssertTrue(answer.contains("Connection: close\r\n"))
        XCTAssertFalse(harness.client.isActive)
    }
}
