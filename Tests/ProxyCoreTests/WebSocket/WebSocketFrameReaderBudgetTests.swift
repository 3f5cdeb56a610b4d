import ProxyCore
import WebSocketTestSupport
import XCTest

/// The payload budget: past it messages still come out with their sizes, without their payload;
/// a frame announcing far more than is ever sent costs nothing but counting.
final class WebSocketFrameReaderBudgetTests: XCTestCase {
    func testPayloadsPastTheBudgetAreCountedNotKept() {
        let bytes = WebSocketFrames.client(2, Array(repeating: 1, count: 6))
            + WebSocketFrames.client(1, Array("abcdef".utf8))
            + WebSocketFrames.client(9, [7, 7, 7])
            + WebSocketFrames.client(2, Array(repeating: 3, count: 300))
            + WebSocketFrames.client(8, WebSocketFrames.closeBody(1000, "bye"))
        for cuts in WebSocketFrames.cuttings(of: bytes.count, seed: 0x5EED_0510) {
            var reader = WebSocketFrameReader(direction: .clientToServer, payloadBudget: 10)
            let messages = WebSocketFrames.feed(bytes, to: &reader, cuts: cuts)
            XCTAssertEqual(messages.map(\.opcode), [.binary, .text, .ping, .binary, .close], "cuts \(cuts)")
            guard messages.count == 5 else { return }
            XCTAssertEqual(messages.map(\.payload), [Array(repeating: 1, count: 6), Array("abcd".utf8), [], [], []])
            XCTAssertEqual(messages.map(\.isPayloadTruncated), [false, true, true, true, true])
            XCTAssertEqual(messages.map(\.wireSize), [6, 6, 3, 300, 5])
            XCTAssertEqual(messages.map(\.payloadSize), [6, 6, 3, 300, 5])
            XCTAssertEqual(messages[4].closeCode, 1000, "close codes are read whatever the budget")
            XCTAssertEqual(messages[4].closeReason, "bye")
            XCTAssertNil(messages[1].issue, "text past the budget is still checked in full: valid")
            XCTAssertEqual(reader.payloadBudgetRemaining, 0)
        }
    }

    /// Invalid UTF-8 beyond what is kept is still found.
    func testTextPastTheBudgetIsStillValidated() {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 2)
        let messages = reader.feed(WebSocketFrames.frame(1, Array("abcd".utf8) + [0xC0, 0x80]))
        XCTAssertEqual(messages.first?.payload, Array("ab".utf8))
        XCTAssertEqual(messages.first?.issue, .invalidUTF8)
    }

    func testPerMessageLimit() {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 100, maxMessagePayload: 4)
        let messages = reader.feed(WebSocketFrames.frame(2, [1, 2, 3, 4, 5, 6]) + WebSocketFrames.frame(2, [7, 8]))
        XCTAssertEqual(messages.map(\.payload), [[1, 2, 3, 4], [7, 8]])
        XCTAssertEqual(messages.map(\.isPayloadTruncated), [true, false])
        XCTAssertEqual(reader.payloadBudgetRemaining, 94)
    }

    /// A frame announcing 2^62 bytes: 10 MiB of it streams through while only the budget is kept;
    /// the reader is still mid-frame afterwards.
    func testHugeAnnouncedFrameIsStreamed() {
        var reader = WebSocketFrameReader(direction: .clientToServer, payloadBudget: 1000)
        let length = UInt64(1) << 62
        let header: [UInt8] = [0x82, 0x80 | 127] + (0..<8).map { UInt8(truncatingIfNeeded: length >> (56 - 8 * $0)) }
            + WebSocketFrames.clientMask
        XCTAssertEqual(reader.feed(header), [])
        let chunk = [UInt8](repeating: 0xAB, count: 1 << 20)
        for _ in 0..<10 { XCTAssertEqual(reader.feed(chunk), []) }
        XCTAssertNil(reader.failure)
        XCTAssertEqual(reader.payloadBudgetRemaining, 0)
        XCTAssertEqual(reader.finish(), .endedMidMessage)
    }

    /// Fragments of one message add up; the message's kept prefix spans fragments.
    func testFragmentsShareTheBudget() {
        var reader = WebSocketFrameReader(direction: .serverToClient, payloadBudget: 5)
        let messages = reader.feed(WebSocketFrames.frame(2, [1, 2, 3], fin: false)
            + WebSocketFrames.frame(0, [4, 5, 6], fin: false) + WebSocketFrames.frame(0, [7]))
        XCTAssertEqual(messages.count, 1)
        XCTAssertEqual(messages.first?.payload, [1, 2, 3, 4, 5])
        XCTAssertEqual(messages.first?.wireSize, 7)
        XCTAssertEqual(messages.first?.frameCount, 3)
        XCTAssertEqual(messages.first?.isPayloadTruncated, true)
    }
}
