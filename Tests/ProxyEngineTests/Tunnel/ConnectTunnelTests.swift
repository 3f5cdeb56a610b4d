import NIOCore
import NIOEmbedded
import ProxyCore
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// CONNECT: answered with 200 once the target is connected, then a byte relay in both
/// directions, recorded as a tunnel flow when it closes.
final class ConnectTunnelTests: XCTestCase {
    func testConnectEstablishesRelayAndRecordsBytes() throws {
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\nHost: db.test:5432\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.first?.kind, .raw)
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 Connection established\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)

        try harness.clientSends("ping")
        XCTAssertEqual(try EngineHarness.drainRaw(upstream), "ping")
        try upstream.writeInbound(ByteBuffer(string: "pong!"))
        XCTAssertEqual(try EngineHarness.drainRaw(harness.client), "pong!")
        XCTAssertTrue(harness.sink.flows.isEmpty, "a tunnel is recorded when it closes")

        try upstream.close().wait()
        XCTAssertFalse(harness.client.isActive)
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.kind, .tunnel)
        XCTAssertEqual(flow.method, "CONNECT")
        XCTAssertEqual(flow.host, "db.test")
        XCTAssertEqual(flow.port, 5432)
        XCTAssertEqual(flow.status, 200)
        XCTAssertEqual(flow.bytesUp, 4)
        XCTAssertEqual(flow.bytesDown, 5)
    }

    /// Bytes the client sent right behind the CONNECT request are relayed, not dropped.
    func testBytesAfterConnectHeadAreKept() throws {
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\n\r\nearly-bytes")
        _ = try harness.clientReceived()
        XCTAssertEqual(try EngineHarness.drainRaw(try XCTUnwrap(harness.upstream)), "early-bytes")
    }

    /// A client that half-closes before the tunnel is up: the target sees the end of input too.
    func testHalfCloseBeforeEstablishedReachesTheTarget() throws {
        let harness = try EngineHarness()
        harness.connector.holdConnects = true
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\n\r\n")
        harness.client.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        let closes = CloseModeRecorder()
        harness.connector.onNewChannel = { try! $0.pipeline.syncOperations.addHandler(closes, position: .first) }
        harness.connector.completePendingConnect()
        harness.loop.run()
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 200 Connection established"))
        XCTAssertEqual(closes.modes, [.output])
    }

    /// A refused CONNECT is a 502 that closes the connection and names the reason in Proxy-Status.
    func testRefusedConnectAnswers502() throws {
        let harness = try EngineHarness()
        harness.connector.failure = ProxyFailure.connectionRefused(host: "db.test", port: 5432)
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("error=connection_refused"))
        XCTAssertFalse(harness.client.isActive)
        XCTAssertEqual(harness.sink.flows.first?.kind, .tunnel)
        XCTAssertEqual(harness.sink.flows.first?.error, "connection refused by db.test:5432")
    }

    /// A CONNECT without a port is a 400.
    func testConnectWithoutPortAnswers400() throws {
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT db.test HTTP/1.1\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        XCTAssertTrue(harness.connector.connects.isEmpty)
    }
}

