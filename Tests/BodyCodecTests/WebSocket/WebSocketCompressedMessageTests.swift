import BodyCodec
import ProxyCore
import SeededRandom
import WebSocketTestSupport
import XCTest

/// BodyCodec's zlib inflater behind ProxyCore's protocol. A forwarding wrapper, not a conformance:
/// the engine declares `WebSocketInflater: WebSocketPayloadInflating`, and one test binary holds
/// both modules, so a second conformance here would be a duplicate at run time.
private final class ReaderInflater: WebSocketPayloadInflating {
    let inflater: WebSocketInflater

    init(windowBits: Int, contextTakeover: Bool) {
        inflater = WebSocketInflater(windowBits: windowBits, contextTakeover: contextTakeover)
    }

    func inflate(_ compressed: ArraySlice<UInt8>, into output: inout [UInt8], limit: Int) throws -> Bool {
        try inflater.inflate(compressed, into: &output, limit: limit)
    }

    func finishMessage(into output: inout [UInt8], limit: Int) throws -> Bool {
        try inflater.finishMessage(into: &output, limit: limit)
    }

    func abandonMessage() {
        inflater.abandonMessage()
    }
}

/// Compressed messages (RSV1, from real zlib) through `WebSocketFrameReader` with BodyCodec's
/// inflater: every cutting of the bytes reads the same, the budget bounds what is inflated, and a
/// message that could not be inflated is said so on the message.
final class WebSocketCompressedMessageTests: XCTestCase {
    private let texts = [
        "{\"op\":\"hello\",\"session\":\"abcdef\",\"features\":[\"compression\",\"fragments\"]}",
        "{\"op\":\"hello\",\"session\":\"abcdef\",\"features\":[\"compression\",\"fragments\"]}",
        "ünïcödé ✓ {\"op\":\"bye\"}",
    ].map { Array($0.utf8) }

    private func reader(_ direction: WebSocketDirection, budget: Int = 1 << 20, takeover: Bool = true,
                        windowBits: Int = 15) -> WebSocketFrameReader {
        let inflater = ReaderInflater(windowBits: windowBits, contextTakeover: takeover)
        return WebSocketFrameReader(direction: direction, payloadBudget: budget,
                                    compression: .permessageDeflate(inflater: inflater))
    }

    /// Server frames: the first message whole, the second fragmented in three with a ping in the
    /// middle (RSV1 on its first frame only), the third whole.
    private func serverTranscript(takeover: Bool) -> [UInt8] {
        let deflater = PerMessageDeflater(contextTakeover: takeover)
        let compressed = texts.map { deflater.compress($0) }
        let second = compressed[1]
        let thirds = [0, second.count / 3, 2 * second.count / 3, second.count]
        return WebSocketFrames.frame(1, compressed[0], rsv: 0b100)
            + WebSocketFrames.frame(1, Array(second[thirds[0]..<thirds[1]]), fin: false, rsv: 0b100)
            + WebSocketFrames.frame(9, Array("keepalive".utf8))
            + WebSocketFrames.frame(0, Array(second[thirds[1]..<thirds[2]]), fin: false)
            + WebSocketFrames.frame(0, Array(second[thirds[2]...]))
            + WebSocketFrames.frame(2, compressed[2], rsv: 0b100)
    }

    func testCompressedServerMessagesEveryCutting() {
        for takeover in [true, false] {
            let bytes = serverTranscript(takeover: takeover)
            for cuts in WebSocketFrames.cuttings(of: bytes.count, seed: 0x5EED_0530) {
                var reader = reader(.serverToClient, takeover: takeover)
                let messages = WebSocketFrames.feed(bytes, to: &reader, cuts: cuts)
                XCTAssertNil(reader.failure)
                XCTAssertEqual(messages.map(\.opcode), [.text, .ping, .text, .binary], "takeover \(takeover), cuts \(cuts)")
                guard messages.count == 4 else { return }
                XCTAssertEqual(messages.map(\.payload), [texts[0], Array("keepalive".utf8), texts[1], texts[2]],
                               "takeover \(takeover), cuts \(cuts)")
                XCTAssertEqual(messages.map(\.isCompressed), [true, false, true, true])
                XCTAssertEqual(messages.map(\.isInflated), [true, false, true, true])
                XCTAssertEqual(messages.map(\.payloadSize), [texts[0].count, 9, texts[1].count, texts[2].count])
                XCTAssertEqual(messages[2].frameCount, 3)
                XCTAssertTrue(messages.allSatisfy { !$0.isPayloadTruncated && $0.issue == nil })
            }
        }
    }

    func testCompressedClientMessagesAreUnmaskedThenInflated() {
        let deflater = PerMessageDeflater(windowBits: 10)
        let compressed = texts.map { deflater.compress($0) }
        let bytes = compressed.flatMap { WebSocketFrames.client(1, $0, rsv: 0b100) }
        for cuts in WebSocketFrames.cuttings(of: bytes.count, seed: 0x5EED_0531) {
            var reader = reader(.clientToServer, windowBits: 10)
            let messages = WebSocketFrames.feed(bytes, to: &reader, cuts: cuts)
            XCTAssertEqual(messages.map(\.payload), texts, "cuts \(cuts)")
            XCTAssertEqual(messages.map(\.wireSize), compressed.map(\.count))
        }
    }

    /// The budget bounds the inflated bytes: the message that crosses it keeps a prefix and has no
    /// known size; with context takeover later compressed messages cannot be inflated.
    func testBudgetWithContextTakeover() {
        let deflater = PerMessageDeflater()
        let compressed = texts.map { deflater.compress($0) }
        var reader = reader(.serverToClient, budget: texts[0].count + 10)
        let messages = compressed.flatMap { reader.feed(WebSocketFrames.frame(1, $0, rsv: 0b100)) }
            + reader.feed(WebSocketFrames.frame(1, Array("plain".utf8)))
        XCTAssertEqual(messages.count, 4)
        XCTAssertEqual(messages[0].payload, texts[0])
        XCTAssertEqual(messages[1].payload, Array(texts[1].prefix(10)))
        XCTAssertTrue(messages[1].isPayloadTruncated)
        XCTAssertNil(messages[1].payloadSize)
        XCTAssertEqual(messages[1].wireSize, compressed[1].count)
        XCTAssertNil(messages[1].issue, "a cut payload is not a problem with the message")
        XCTAssertEqual(messages[2].payload, [], "the budget is spent: not inflated")
        XCTAssertTrue(messages[2].isPayloadTruncated)
        XCTAssertNil(messages[2].payloadSize)
        XCTAssertNil(messages[2].issue, "nothing would have been kept: no issue")
        XCTAssertEqual(messages[3].payload, [])
        XCTAssertEqual(messages[3].payloadSize, 5)
    }

    /// A message over the per-message limit leaves the window unknown: with context takeover the
    /// next compressed message says it could not be inflated rather than show wrong bytes.
    func testPerMessageLimitWithContextTakeover() {
        let deflater = PerMessageDeflater()
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 1 << 20, maxMessagePayload: 20,
                                          compression: .permessageDeflate(inflater: ReaderInflater(windowBits: 15,
                                                                                                   contextTakeover: true)))
        let messages = texts.flatMap { reader.feed(WebSocketFrames.frame(1, deflater.compress($0), rsv: 0b100)) }
        XCTAssertEqual(messages.count, 3)
        XCTAssertEqual(messages.first?.payload, Array(texts[0].prefix(20)))
        XCTAssertNil(messages.first?.issue)
        for message in messages.dropFirst() {
            XCTAssertEqual(message.payload, [])
            guard case .inflationFailed = message.issue else { return XCTFail("\(String(describing: message.issue))") }
        }
    }

    /// Without context takeover, a message over the per-message limit does not spoil the next one.
    func testPerMessageLimitWithoutContextTakeover() {
        let deflater = PerMessageDeflater(contextTakeover: false)
        let inflater = ReaderInflater(windowBits: 15, contextTakeover: false)
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 1 << 20, maxMessagePayload: 20,
                                          compression: .permessageDeflate(inflater: inflater))
        let messages = texts.flatMap { reader.feed(WebSocketFrames.frame(1, deflater.compress($0), rsv: 0b100)) }
            + reader.feed(WebSocketFrames.frame(1, deflater.compress(Array("short".utf8)), rsv: 0b100))
        XCTAssertEqual(messages.map(\.payload), texts.map { Array($0.prefix(20)) } + [Array("short".utf8)])
        XCTAssertEqual(messages.map(\.isPayloadTruncated), [true, true, true, false])
        XCTAssertTrue(messages.allSatisfy { $0.issue == nil })
    }

    /// 10 MiB of zeros, compressed, fragmented: 64 KiB kept, the rest never inflated.
    func testDecompressionBombThroughTheReader() {
        let bomb = PerMessageDeflater().compress([UInt8](repeating: 0, count: 10 << 20))
        let half = bomb.count / 2
        let bytes = WebSocketFrames.client(2, Array(bomb[..<half]), fin: false, rsv: 0b100)
            + WebSocketFrames.client(0, Array(bomb[half...]))
        var reader = reader(.clientToServer, budget: 64 << 10)
        let messages = reader.feed(bytes)
        XCTAssertEqual(messages.count, 1)
        XCTAssertEqual(messages.first?.payload.count, 64 << 10)
        XCTAssertEqual(messages.first?.wireSize, bomb.count)
        XCTAssertEqual(messages.first?.isPayloadTruncated, true)
        XCTAssertNil(messages.first?.payloadSize)
        XCTAssertEqual(reader.payloadBudgetRemaining, 0)
    }

    func testWithoutAnInflaterTheCompressedBytesAreKept() {
        let compressed = PerMessageDeflater().compress(texts[0])
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 1000,
                                          compression: .permessageDeflate(inflater: nil))
        let message = reader.feed(WebSocketFrames.frame(1, compressed, rsv: 0b100)).first
        XCTAssertEqual(message?.payload, compressed)
        XCTAssertEqual(message?.isCompressed, true)
        XCTAssertEqual(message?.isInflated, false)
        XCTAssertNil(message?.payloadSize)
        XCTAssertNil(message?.issue, "compressed bytes are not checked as UTF-8")
    }

    func testCorruptCompressedPayloadIsAnIssueAndReadingGoesOn() {
        var reader = reader(.serverToClient, takeover: false)
        let messages = reader.feed(WebSocketFrames.frame(2, [0xFF, 0xFF, 0xFF], rsv: 0b100)
            + WebSocketFrames.frame(1, PerMessageDeflater().compress(texts[0]), rsv: 0b100))
        XCTAssertEqual(messages.count, 2)
        guard case .inflationFailed = messages.first?.issue else { return XCTFail("\(messages)") }
        XCTAssertEqual(messages.last?.payload, texts[0])
        XCTAssertNil(reader.failure)
    }

    func testInflatedTextMustBeUTF8() {
        var reader = reader(.serverToClient)
        let message = reader.feed(WebSocketFrames.frame(1, PerMessageDeflater().compress([0x61, 0xFF]), rsv: 0b100)).first
        XCTAssertEqual(message?.payload, [0x61, 0xFF])
        XCTAssertEqual(message?.issue, .invalidUTF8)
    }
}
