import NIOCore
import NIOEmbedded
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The handler that waits for a tunnel's first bytes: what it decides, when, and that the bytes
/// reach whatever replaces it untouched.
final class FirstBytesSnifferTests: XCTestCase {
    /// Collects what the sniffer hands over.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var bytes = ByteBuffer()
        var inputClosed = false
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes.writeBuffer(&buffer)
        }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { inputClosed = true }
        }
    }

    private final class Decisions {
        var kinds: [FirstBytes] = []
        var clientClosed = 0
    }

    private func makeChannel() throws -> (EmbeddedChannel, FirstBytesSniffer, Decisions, ReadCounter) {
        let channel = EmbeddedChannel()
        let decisions = Decisions()
        let reads = ReadCounter()
        let sniffer = FirstBytesSniffer(
            timeout: .seconds(1),
            callbacks: .init(decided: { decisions.kinds.append($0) }, clientClosed: { decisions.clientClosed += 1 }))
        try channel.pipeline.syncOperations.addHandler(reads)
        try channel.pipeline.syncOperations.addHandler(sniffer)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        return (channel, sniffer, decisions, reads)
    }

    /// A ClientHello naming `a.test`, offering http/1.1: record header, handshake header, body.
    private static func clientHello() -> [UInt8] {
        let name = Array("a.test".utf8)
        var sni: [UInt8] = [0x00]  // host_name
        sni += [UInt8(name.count >> 8), UInt8(name.count & 0xff)] + name
        let sniList = [UInt8(sni.count >> 8), UInt8(sni.count & 0xff)] + sni
        let alpnList: [UInt8] = [0x00, 0x09, 0x08] + Array("http/1.1".utf8)
        var extensions: [UInt8] = [0x00, 0x00, UInt8(sniList.count >> 8), UInt8(sniList.count & 0xff)] + sniList
        extensions += [0x00, 0x10, UInt8(alpnList.count >> 8), UInt8(alpnList.count & 0xff)] + alpnList
        var body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 7, count: 32) + [0x00]  // version, random, no session id
        body += [0x00, 0x02, 0x13, 0x01, 0x01, 0x00]  // one cipher suite, null compression
        body += [UInt8(extensions.count >> 8), UInt8(extensions.count & 0xff)] + extensions
        let handshake = [0x01, 0x00, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
        return [0x16, 0x03, 0x01, UInt8(handshake.count >> 8), UInt8(handshake.count & 0xff)] + handshake
    }

    func testWholeClientHelloDecidesTLSAndIsHandedOverUntouched() throws {
        let (channel, sniffer, decisions, reads) = try makeChannel()
        let hello = Self.clientHello()
        try channel.writeInbound(ByteBuffer(bytes: hello.prefix(20)))
        XCTAssertTrue(decisions.kinds.isEmpty, "a prefix of a hello is not enough to decide")
        try channel.writeInbound(ByteBuffer(bytes: hello.dropFirst(20)))
        guard case .tls(let parsed)? = decisions.kinds.first else {
            return XCTFail("expected a TLS decision, got \(decisions.kinds)")
        }
        XCTAssertEqual(parsed.serverName, "a.test")
        XCTAssertEqual(parsed.alpnProtocols, ["http/1.1"])

        // Once decided, reads wait for the handover.
        let readsBefore = reads.reads
        channel.read()
        XCTAssertEqual(reads.reads, readsBefore)

        let collector = Collector()
        try channel.pipeline.syncOperations.addHandler(collector)
        sniffer.handOver()
        XCTAssertEqual(collector.bytes, ByteBuffer(bytes: hello))
        XCTAssertThrowsError(try channel.pipeline.syncOperations.handler(type: FirstBytesSniffer.self),
                             "the sniffer leaves the pipeline after the handover")
        XCTAssertGreaterThan(reads.reads, readsBefore, "reads resume after the handover")
        XCTAssertEqual(decisions.kinds.count, 1)
    }

    func testRequestLineDecidesHTTP() throws {
        let (channel, _, decisions, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(string: "GE"))
        XCTAssertTrue(decisions.kinds.isEmpty)
        try channel.writeInbound(ByteBuffer(string: "T / HTTP/1.1\r\n"))
        XCTAssertEqual(decisions.kinds, [.http])
    }

    func testOtherBytesDecideOpaque() throws {
        let (channel, _, decisions, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(string: "SSH-2.0-OpenSSH_9.2\r\n"))
        XCTAssertEqual(decisions.kinds, [.opaque])
    }

    /// A handshake record that is not a ClientHello is not TLS we can intercept.
    func testBrokenHandshakeRecordDecidesOpaque() throws {
        let (channel, _, decisions, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]))
        XCTAssertEqual(decisions.kinds, [.opaque])
    }

    /// Nothing for the whole timeout: a server-speaks-first protocol.
    func testSilenceDecidesOpaqueAfterTheTimeout() throws {
        let (channel, _, decisions, _) = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        XCTAssertTrue(decisions.kinds.isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(decisions.kinds, [.opaque])
    }

    /// A client that half-closes before saying anything gets a relay, and its end of input is
    /// passed on with the handover.
    func testHalfCloseDecidesOpaqueAndIsPassedOn() throws {
        let (channel, sniffer, decisions, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(string: "x"))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertEqual(decisions.kinds, [.opaque])
        let collector = Collector()
        try channel.pipeline.syncOperations.addHandler(collector)
        sniffer.handOver()
        XCTAssertEqual(collector.bytes, ByteBuffer(string: "x"))
        XCTAssertTrue(collector.inputClosed)
    }

    func testClientLeavingBeforeTheHandoverIsReportedOnce() throws {
        let (channel, _, decisions, _) = try makeChannel()
        try channel.close().wait()
        XCTAssertEqual(decisions.clientClosed, 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        XCTAssertTrue(decisions.kinds.isEmpty, "no decision after the client left")
    }
}
