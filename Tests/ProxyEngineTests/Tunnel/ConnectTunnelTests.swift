import NIOCore
import NIOEmbedded
import NIOHTTP1
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

    /// Why a CONNECT with a body must be refused: NIO's decoder ends a CONNECT at its head
    /// whatever Content-Length says, and hands every byte after it on as tunnel data.
    func testDecoderTreatsAConnectBodyAsTunnelBytes() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
        try channel.writeInbound(ByteBuffer(string: "CONNECT db.test:5432 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"))
        guard case .head(let head)? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            return XCTFail("no head")
        }
        XCTAssertEqual(head.headers["content-length"], ["5"])
        guard case .end? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            return XCTFail("the request does not end at its head")
        }
        XCTAssertNil(try channel.readInbound(as: HTTPServerRequestPart.self), "the body is not read as a body")
        _ = try? channel.finish()
    }

    /// A CONNECT declaring a body (Content-Length other than 0, any Transfer-Encoding) is a 400
    /// that closes: its body is never pushed into a tunnel and nothing is dialled.
    func testConnectWithBodyAnswers400AndCloses() throws {
        for (framing, body, field) in [("Content-Length: 5", "hello", "Content-Length"),
                                       ("Transfer-Encoding: chunked", "5\r\nhello\r\n0\r\n\r\n", "Transfer-Encoding")] {
            let harness = try EngineHarness()
            try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\n\(framing)\r\n\r\n\(body)")
            let answer = try harness.clientReceived()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
            // NIO's encoder sends no body in an answer to a CONNECT: the reason is in Proxy-Status.
            XCTAssertTrue(answer.contains("Proxy-Status: ProxyApp; error=http_request_error; "
                                          + "details=\"bad request: a CONNECT request has no body: remove \(field)\"\r\n"),
                          answer)
            XCTAssertTrue(answer.hasSuffix("\r\n\r\n"), answer)
            XCTAssertTrue(answer.contains("Connection: close"), answer)
            XCTAssertFalse(harness.client.isActive)
            XCTAssertTrue(harness.connector.connects.isEmpty)
        }
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 Connection established\r\n\r\n")
    }

    /// An HTTP/1.0 CONNECT is a tunnel too, answered in HTTP/1.0.
    func testHTTP10Connect() throws {
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT db.test:5432 HTTP/1.0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.0 200 Connection established\r\n\r\n")
        try harness.clientSends("ping")
        XCTAssertEqual(try EngineHarness.drainRaw(try XCTUnwrap(harness.upstream)), "ping")
    }

    /// The tunnel dials the canonical host: the one its rules matched.
    func testConnectDialsTheCanonicalHost() throws {
        let harness = try EngineHarness()
        try harness.clientSends("CONNECT 0x7f.1:5432 HTTP/1.1\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.first?.host, "127.0.0.1")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 200 "))
    }
}

