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
        let sniffer = FirstBytesSniffer.client(
            callbacks: .init(decided: { decisions.kinds.append($0) }, closed: { decisions.clientClosed += 1 }))
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

    /// `message` (a handshake message) in records of one byte each, with `version` in each header.
    private static func oneByteRecords(_ message: ArraySlice<UInt8>, version: UInt8 = 1) -> [UInt8] {
        message.flatMap { [0x16, 0x03, version, 0x00, 0x01, $0] }
    }

    /// Was 0.33 s of CPU per connection: every read re-parsed the whole buffer. A hello padded
    /// to 11 KB, sent as 66 KB of one-byte records one read each, is decided with each byte
    /// examined once (the classifier's counter, as the sniffer feeds it).
    func testOneByteRecordsAreClassifiedInLinearWork() throws {
        let hello = Self.clientHello()
        var message = Array(hello.dropFirst(5))
        // Pad the body with a padding extension (21) to reach 11,000 bytes of message.
        let padding = 11_000 - message.count - 4
        message += [0x00, 0x15, UInt8(padding >> 8), UInt8(padding & 0xff)] + [UInt8](repeating: 0, count: padding)
        let bodyLength = message.count - 4
        message[1...3] = [UInt8(bodyLength >> 16), UInt8((bodyLength >> 8) & 0xff), UInt8(bodyLength & 0xff)]
        let extensionsAt = 4 + 2 + 32 + 1 + 2 + 2 + 2  // version, random, session id, suites, compression
        let extensionsLength = message.count - extensionsAt - 2
        message[extensionsAt...(extensionsAt + 1)] = [UInt8(extensionsLength >> 8), UInt8(extensionsLength & 0xff)]
        let input = Self.oneByteRecords(message[...])
        XCTAssertEqual(input.count, 66_000)

        var classifier = FirstBytesClassifier()
        var buffer = ByteBuffer()
        var kind = FirstBytes.needMore
        for start in stride(from: 0, to: input.count, by: 6) {
            buffer.writeBytes(input[start..<(start + 6)])
            kind = classifier.classify(buffer.readableBytesView)
        }
        guard case .tls(let parsed) = kind else { return XCTFail("got \(kind)") }
        XCTAssertEqual(parsed.serverName, "a.test")
        XCTAssertLessThanOrEqual(classifier.helloBytesExamined, input.count + message.count, "linear, not quadratic")

        let (channel, _, decisions, _) = try makeChannel()
        for start in stride(from: 0, to: input.count, by: 6) {
            try channel.writeInbound(ByteBuffer(bytes: input[start..<(start + 6)]))
        }
        XCTAssertEqual(decisions.kinds, [kind])
    }

    /// RFC 5246 Appendix E: a ClientHello record may say version 0x0300. Was relayed.
    func testRecordVersion0300DecidesTLS() throws {
        var hello = Self.clientHello()
        hello[2] = 0x00
        let (channel, _, decisions, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: hello))
        guard case .tls(let parsed)? = decisions.kinds.first else { return XCTFail("\(decisions.kinds)") }
        XCTAssertEqual(parsed.serverName, "a.test")
    }

    /// A request line trickled byte by byte still decides HTTP, once its line ends.
    func testRequestLineByteByByte() throws {
        let (channel, _, decisions, _) = try makeChannel()
        for byte in "GET /a/b?c HTTP/1.1\r\n".utf8 {
            XCTAssertTrue(decisions.kinds.isEmpty)
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        XCTAssertEqual(decisions.kinds, [.http])
    }

    /// On an origin connection any byte decides; an end without bytes decides too, with nothing held.
    func testOriginSnifferDecidesOnAnyByte() throws {
        for (bytes, held) in [([UInt8](arrayLiteral: 0x53), 1), ([], 0)] {
            let channel = EmbeddedChannel()
            let decisions = Decisions()
            let sniffer = FirstBytesSniffer.origin(
                callbacks: .init(decided: { decisions.kinds.append($0) }, closed: {}))
            try channel.pipeline.syncOperations.addHandler(sniffer)
            if bytes.isEmpty {
                channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            } else {
                try channel.writeInbound(ByteBuffer(bytes: bytes))
            }
            XCTAssertEqual(decisions.kinds, [.opaque])
            XCTAssertEqual(sniffer.heldByteCount, held)
        }
    }

    /// A decision the tunnel took alone (`settle`): classifying stops, reads wait, the bytes
    /// held so far are handed over intact.
    func testSettledSnifferHoldsReadsAndHandsOver() throws {
        let (channel, sniffer, decisions, reads) = try makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: [0x16, 0x03]))
        sniffer.settle()
        try channel.writeInbound(ByteBuffer(bytes: [0x01]))
        XCTAssertTrue(decisions.kinds.isEmpty)
        let readsBefore = reads.reads
        channel.read()
        XCTAssertEqual(reads.reads, readsBefore)
        let collector = Collector()
        try channel.pipeline.syncOperations.addHandler(collector)
        sniffer.handOver()
        XCTAssertEqual(collector.bytes, ByteBuffer(bytes: [0x16, 0x03, 0x01]))
    }
}
