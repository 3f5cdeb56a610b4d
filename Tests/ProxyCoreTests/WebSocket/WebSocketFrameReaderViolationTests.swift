import ProxyCore
import WebSocketTestSupport
import XCTest

/// Each protocol violation: a framing one stops the reader (messages before it still come out,
/// nothing after it does); a content one is set on its message and reading goes on.
final class WebSocketFrameReaderViolationTests: XCTestCase {
    private let good = WebSocketFrames.frame(2, [42])

    /// `prefix` reads fine, then `bad` stops the reader with `expected`; a good frame after it is ignored.
    private func assertStops(_ bad: [UInt8], _ expected: WebSocketObservationError, prefix: [UInt8] = [],
                             direction: WebSocketDirection = .serverToClient,
                             compression: WebSocketFrameReader.Compression = .none,
                             file: StaticString = #filePath, line: UInt = #line) {
        let follow = direction == .serverToClient ? good : WebSocketFrames.client(2, [42])
        let bytes = follow + prefix + bad + follow
        for cuts in [[], Array(0..<bytes.count)] {
            var reader = WebSocketFrameReader(direction: direction, payloadBudget: 1000, compression: compression)
            let messages = WebSocketFrames.feed(bytes, to: &reader, cuts: cuts)
            XCTAssertEqual(reader.failure, expected, file: file, line: line)
            XCTAssertEqual(messages.first?.payload, [42], "the message before the violation", file: file, line: line)
            XCTAssertFalse(messages.dropFirst().contains { $0.payload == [42] }, "nothing after it", file: file, line: line)
            XCTAssertTrue(expected.stopsObserving, file: file, line: line)
            XCTAssertNil(reader.finish(), "a stopped reader reports once", file: file, line: line)
        }
    }

    func testReservedOpcodes() {
        for opcode: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            assertStops(WebSocketFrames.frame(opcode, [1]), .reservedOpcode(opcode))
        }
    }

    func testReservedBits() {
        assertStops(WebSocketFrames.frame(2, [1], rsv: 0b010), .reservedBitSet)
        assertStops(WebSocketFrames.frame(2, [1], rsv: 0b001), .reservedBitSet)
        assertStops(WebSocketFrames.frame(2, [1], rsv: 0b100), .compressionNotNegotiated)
    }

    func testCompressionBitOnlyOnAFirstDataFrame() {
        let deflate = WebSocketFrameReader.Compression.permessageDeflate(inflater: nil)
        assertStops(WebSocketFrames.frame(9, [], rsv: 0b100), .compressionBitMisplaced(opcode: 9), compression: deflate)
        assertStops(WebSocketFrames.frame(0, [1], rsv: 0b100), .compressionBitMisplaced(opcode: 0),
                    prefix: WebSocketFrames.frame(2, [1], fin: false, rsv: 0b100), compression: deflate)
    }

    func testControlFrameTooLong() {
        assertStops(WebSocketFrames.frame(9, Array(repeating: 0, count: 126)), .controlFrameTooLong(opcode: 9, length: 126))
        assertStops(WebSocketFrames.frame(8, Array(repeating: 0, count: 200), lengthBytes: 8),
                    .controlFrameTooLong(opcode: 8, length: 200))
    }

    func testFragmentedControlFrame() {
        assertStops(WebSocketFrames.frame(10, [1], fin: false), .fragmentedControlFrame(opcode: 10))
    }

    func testLengthWithTopBitSet() {
        assertStops([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1], .lengthTopBitSet)
    }

    func testMaskingTheWrongWay() {
        assertStops(WebSocketFrames.frame(2, [1]), .unmaskedClientFrame, direction: .clientToServer)
        assertStops(WebSocketFrames.client(2, [1]), .maskedServerFrame)
    }

    func testContinuationWithoutStart() {
        assertStops(WebSocketFrames.frame(0, [1]), .continuationWithoutStart)
    }

    func testDataFrameInsideFragmentedMessage() {
        assertStops(WebSocketFrames.frame(1, [0x41]), .dataFrameInsideFragmentedMessage,
                    prefix: WebSocketFrames.frame(2, [1], fin: false))
    }

    func testFrameAfterClose() {
        assertStops(WebSocketFrames.frame(9, []), .frameAfterClose, prefix: WebSocketFrames.frame(8, []))
    }

    // Content problems: on the message, reading goes on.

    private func assertIssue(_ frame: [UInt8], _ expected: WebSocketObservationError,
                             file: StaticString = #filePath, line: UInt = #line) -> WebSocketMessage? {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 1000)
        let isClose = frame[0] & 0x0F == 8  // nothing may follow a close
        let messages = reader.feed(frame + (isClose ? [] : good))
        XCTAssertNil(reader.failure, file: file, line: line)
        XCTAssertFalse(expected.stopsObserving, file: file, line: line)
        XCTAssertEqual(messages.first?.issue, expected, file: file, line: line)
        if !isClose {
            XCTAssertEqual(messages.last?.payload, [42], "reading went on", file: file, line: line)
        }
        return messages.first
    }

    func testInvalidUTF8Text() {
        for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x61, 0xE2, 0x82],
                             [0x80], [0xE2, 0x28, 0xA1]] {
            let message = assertIssue(WebSocketFrames.frame(1, bad), .invalidUTF8)
            XCTAssertEqual(message?.payload, bad, "kept as sent")
        }
    }

    /// A character left unfinished at the end of a message, though each fragment was fine so far.
    func testTextEndingMidCharacter() {
        _ = assertIssue(WebSocketFrames.frame(1, [0x61], fin: false) + WebSocketFrames.frame(0, [0xF0, 0x9F]), .invalidUTF8)
    }

    func testCloseBodyOfOneByte() {
        let message = assertIssue(WebSocketFrames.frame(8, [3]), .closeBodyTooShort)
        XCTAssertNil(message?.closeCode)
    }

    func testForbiddenCloseCodes() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            let message = assertIssue(WebSocketFrames.frame(8, WebSocketFrames.closeBody(code, "")), .invalidCloseCode(code))
            XCTAssertEqual(message?.closeCode, code)
        }
        for code: UInt16 in [1000, 1003, 1007, 1011, 1014, 3000, 4999] {
            var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 1000)
            XCTAssertNil(reader.feed(WebSocketFrames.frame(8, WebSocketFrames.closeBody(code, ""))).first?.issue, "\(code)")
        }
    }

    func testCloseReasonNotUTF8() {
        let message = assertIssue(WebSocketFrames.frame(8, WebSocketFrames.closeBody(1000, "") + [0xFE]), .invalidUTF8)
        XCTAssertEqual(message?.closeCode, 1000)
    }

    func testEveryErrorHasWords() {
        let errors: [WebSocketObservationError] = [
            .reservedOpcode(3), .reservedBitSet, .compressionNotNegotiated, .compressionBitMisplaced(opcode: 0),
            .controlFrameTooLong(opcode: 9, length: 200), .fragmentedControlFrame(opcode: 9), .lengthTopBitSet,
            .unmaskedClientFrame, .maskedServerFrame, .continuationWithoutStart, .dataFrameInsideFragmentedMessage,
            .frameAfterClose, .endedMidMessage, .closeBodyTooShort, .invalidCloseCode(1005), .invalidUTF8,
            .inflationFailed("x"),
        ]
        XCTAssertEqual(Set(errors.map(\.description)).count, errors.count)
    }
}
