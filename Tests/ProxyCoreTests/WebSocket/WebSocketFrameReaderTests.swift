import ProxyCore
import WebSocketTestSupport
import XCTest

/// Transcripts of well-formed traffic through `WebSocketFrameReader`, each fed whole, one byte at a
/// time, cut in two at every position and cut at random (seeded): the messages must be the same.
final class WebSocketFrameReaderTests: XCTestCase {
    private let budget = 1 << 20

    /// Feeds `bytes` every way and checks that each cutting yields `expected`.
    private func assertMessages(_ bytes: [UInt8], direction: WebSocketDirection, expected: [WebSocketMessage],
                                seed: UInt64 = 0x5EED_0500, file: StaticString = #filePath, line: UInt = #line) {
        for cuts in WebSocketFrames.cuttings(of: bytes.count, seed: seed) {
            var reader = WebSocketFrameReader(direction: direction, payloadBudget: budget)
            let messages = WebSocketFrames.feed(bytes, to: &reader, cuts: cuts)
            XCTAssertNil(reader.failure, "cuts \(cuts)", file: file, line: line)
            XCTAssertNil(reader.finish(), "cuts \(cuts)", file: file, line: line)
            guard messages == expected else {
                XCTFail("cuts \(cuts): \(messages) != \(expected)", file: file, line: line)
                return
            }
        }
    }

    private func message(_ opcode: WebSocketOpcode, _ payload: [UInt8], _ direction: WebSocketDirection,
                         frames: Int = 1) -> WebSocketMessage {
        WebSocketMessage(direction: direction, opcode: opcode, payload: payload, wireSize: payload.count,
                         payloadSize: payload.count, frameCount: frames)
    }

    func testServerTextAndBinary() {
        let binary: [UInt8] = [0, 1, 2, 0xFF, 0x80]
        let bytes = WebSocketFrames.frame(1, Array("héllo".utf8)) + WebSocketFrames.frame(2, binary)
            + WebSocketFrames.frame(1, [])
        assertMessages(bytes, direction: .serverToClient, expected: [
            message(.text, Array("héllo".utf8), .serverToClient),
            message(.binary, binary, .serverToClient),
            message(.text, [], .serverToClient),
        ])
    }

    func testMaskedClientFramesAreUnmasked() {
        let text = Array("Hello, server! This text spans several mask periods.".utf8)
        let bytes = WebSocketFrames.client(1, text) + WebSocketFrames.client(2, [9, 8, 7])
        XCTAssertNotEqual(Array(bytes[6...]), text, "the test's frame must really be masked")
        assertMessages(bytes, direction: .clientToServer, expected: [
            message(.text, text, .clientToServer), message(.binary, [9, 8, 7], .clientToServer),
        ])
    }

    /// A fragmented message with a ping and a pong between its fragments: the control messages
    /// come out first, in wire order, and the fragments are joined (with the mask's phase
    /// restarting for every frame).
    func testFragmentedMessageWithInterleavedControlFrames() {
        let bytes = WebSocketFrames.client(1, Array("frag".utf8), fin: false)
            + WebSocketFrames.client(9, Array("ping!".utf8))
            + WebSocketFrames.client(0, Array("mented ".utf8), fin: false)
            + WebSocketFrames.client(10, [])
            + WebSocketFrames.client(0, Array("text".utf8))
            + WebSocketFrames.client(2, [1], fin: false) + WebSocketFrames.client(0, [2, 3])
        assertMessages(bytes, direction: .clientToServer, expected: [
            message(.ping, Array("ping!".utf8), .clientToServer),
            message(.pong, [], .clientToServer),
            message(.text, Array("fragmented text".utf8), .clientToServer, frames: 3),
            message(.binary, [1, 2, 3], .clientToServer, frames: 2),
        ])
    }

    /// A character split across two fragments is still valid UTF-8.
    func testCharacterSplitAcrossFragments() {
        let euro = Array("€".utf8)
        let bytes = WebSocketFrames.frame(1, [euro[0]], fin: false) + WebSocketFrames.frame(0, Array(euro[1...]))
        assertMessages(bytes, direction: .serverToClient, expected: [message(.text, euro, .serverToClient, frames: 2)])
    }

    func testCloseWithCodeAndReason() {
        let body = WebSocketFrames.closeBody(1001, "going away ✓")
        var expected = message(.close, body, .clientToServer)
        expected.closeCode = 1001
        expected.closeReason = "going away ✓"
        assertMessages(WebSocketFrames.client(8, body), direction: .clientToServer, expected: [expected])
    }

    func testEmptyClose() {
        assertMessages(WebSocketFrames.frame(8, []), direction: .serverToClient, expected: [
            message(.close, [], .serverToClient),
        ])
    }

    /// 16- and 64-bit lengths, including a short payload in the 64-bit form (not minimal, accepted).
    func testExtendedLengths() {
        let medium = (0..<300).map { UInt8($0 & 0xFF) }
        let large = (0..<70_000).map { UInt8(($0 * 7) & 0xFF) }
        let bytes = WebSocketFrames.frame(2, medium) + WebSocketFrames.client(2, large)
        XCTAssertEqual(bytes[1], 126)
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: budget)
        XCTAssertEqual(reader.feed(WebSocketFrames.frame(2, medium)), [message(.binary, medium, .serverToClient)])
        XCTAssertEqual(reader.feed(WebSocketFrames.frame(2, [5], lengthBytes: 8)), [message(.binary, [5], .serverToClient)])
        var client = WebSocketFrameReader(direction: .clientToServer, payloadBudget: budget)
        let largeFrame = WebSocketFrames.client(2, large)
        XCTAssertEqual(largeFrame[1], 0x80 | 127)
        var messages: [WebSocketMessage] = []
        for start in stride(from: 0, to: largeFrame.count, by: 997) {
            messages += client.feed(largeFrame[start..<min(largeFrame.count, start + 997)])
        }
        XCTAssertEqual(messages, [message(.binary, large, .clientToServer)])
    }

    /// Data after a complete message in the same chunk, and a header cut after its first byte:
    /// nothing comes out until a message is complete.
    func testNothingBeforeAMessageIsComplete() {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: budget)
        let frame = WebSocketFrames.frame(1, Array("abc".utf8))
        XCTAssertEqual(reader.feed(frame + [0x81]), [message(.text, Array("abc".utf8), .serverToClient)])
        XCTAssertEqual(reader.feed([0x01]), [])
        XCTAssertEqual(reader.finish(), .endedMidMessage, "a frame was left half-read")
        XCTAssertEqual(reader.feed([0x41]), [], "a stopped reader reads nothing")
    }

    /// A stream that ends between fragments of a message did not end cleanly.
    func testFinishInsideFragmentedMessage() {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: budget)
        XCTAssertEqual(reader.feed(WebSocketFrames.frame(2, [1], fin: false)), [])
        XCTAssertEqual(reader.finish(), .endedMidMessage)
        XCTAssertEqual(reader.failure, .endedMidMessage)
    }
}
