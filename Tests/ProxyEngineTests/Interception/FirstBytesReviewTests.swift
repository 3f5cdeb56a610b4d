import NIOCore
import NIOEmbedded
import XCTest
@testable import ProxyEngine

/// Regression guards for the first-bytes decision (from a review; each failed before its fix).
final class FirstBytesReviewTests: XCTestCase {
    private final class Decisions {
        var kinds: [FirstBytes] = []
    }

    /// Was a hang: bytes that are a valid prefix of a ClientHello and then nothing
    /// were never decided (the timer only decided an empty buffer), so the connection hung.
    func testStalledPrefixIsDecidedOpaqueWhenTheTimeoutPasses() throws {
        let channel = EmbeddedChannel()
        let decisions = Decisions()
        let sniffer = FirstBytesSniffer(
            timeout: .seconds(1), callbacks: .init(decided: { decisions.kinds.append($0) }, clientClosed: {}))
        try channel.pipeline.syncOperations.addHandler(sniffer)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        try channel.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01]))
        XCTAssertTrue(decisions.kinds.isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        XCTAssertEqual(decisions.kinds, [.opaque])
    }

    /// an upper-case word and a space is not yet an HTTP request line.
    func testUpperCaseWordsThatAreNoRequestLineAreOpaque() {
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "NICK reviewer\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "SET key value\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "AUTH PLAIN x\n")), .opaque)
    }

    /// Real request lines still select HTTP, also when the line arrives in pieces.
    func testRequestLinesAreHTTP() {
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET / HTTP/1.1\r\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET http://a.test/x HTTP/1.0\r\nHost: a\r\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "OPTIONS * HTTP/1.1\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET /long")), .needMore)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET / HTTP/1.1")), .needMore)
    }
}
