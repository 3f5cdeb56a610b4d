import BodyCodec
import SeededRandom
import XCTest

/// `WebSocketInflater` alone: messages from real zlib (`PerMessageDeflater`), with and without
/// context takeover, split anywhere, bounded against bombs, and refusing to guess after a gap.
final class WebSocketInflaterTests: XCTestCase {
    private let messages: [[UInt8]] = [
        Array("{\"type\":\"subscribe\",\"channel\":\"prices\",\"symbols\":[\"AAA\",\"BBB\"]}".utf8),
        Array("{\"type\":\"subscribe\",\"channel\":\"prices\",\"symbols\":[\"AAA\",\"BBB\"]}".utf8),
        [],
        Array("{\"type\":\"unsubscribe\",\"channel\":\"prices\"}".utf8),
    ]

    /// Inflates one message, its compressed bytes fed in pieces of `step`.
    private func inflate(_ inflater: WebSocketInflater, _ compressed: [UInt8], step: Int = .max,
                         limit: Int = 1 << 20) throws -> (output: [UInt8], complete: Bool) {
        var output: [UInt8] = []
        var start = 0
        repeat {
            let end = min(compressed.count, start + max(1, min(step, compressed.count)))
            guard try inflater.inflate(compressed[start..<end], into: &output, limit: limit) else {
                inflater.abandonMessage()
                return (output, false)
            }
            start = end
        } while start < compressed.count
        let complete = try inflater.finishMessage(into: &output, limit: limit)
        if !complete { inflater.abandonMessage() }
        return (output, complete)
    }

    func testContextTakeover() throws {
        let deflater = PerMessageDeflater()
        let compressed = messages.map { deflater.compress($0) }
        XCTAssertLessThan(compressed[1].count, compressed[0].count / 2, "the second message refers back to the first")
        for step in [1, 3, Int.max] {
            let inflater = WebSocketInflater()
            for (index, message) in messages.enumerated() {
                let result = try inflate(inflater, compressed[index], step: step)
                XCTAssertEqual(result.output, message, "message \(index), step \(step)")
                XCTAssertTrue(result.complete)
            }
        }
        // An inflater that forgets its window cannot read the second message: takeover matters.
        let forgetful = WebSocketInflater(contextTakeover: false)
        XCTAssertEqual(try inflate(forgetful, compressed[0]).output, messages[0])
        XCTAssertThrowsError(try inflate(forgetful, compressed[1]))
    }

    func testNoContextTakeover() throws {
        let deflater = PerMessageDeflater(contextTakeover: false)
        let compressed = messages.map { deflater.compress($0) }
        XCTAssertEqual(compressed[0], compressed[1], "each message starts afresh")
        let inflater = WebSocketInflater(contextTakeover: false)
        for (index, message) in messages.enumerated() {
            XCTAssertEqual(try inflate(inflater, compressed[index], step: 2).output, message, "message \(index)")
        }
    }

    func testSmallWindow() throws {
        var random = SeededRandom(seed: 0x5EED_0520)
        let text = (0..<4000).map { _ in UInt8.random(in: 0x61...0x64, using: &random) }
        let deflater = PerMessageDeflater(windowBits: 9)
        let inflater = WebSocketInflater(windowBits: 9)
        for _ in 0..<3 {
            XCTAssertEqual(try inflate(inflater, deflater.compress(text), step: 100).output, text)
        }
    }

    /// Messages ended with a final block (BFINAL) while the window is kept.
    func testFinalBlocksWithContextTakeover() throws {
        let deflater = PerMessageDeflater()
        let compressed = messages.map { deflater.compress($0, final: true) }
        let inflater = WebSocketInflater()
        for (index, message) in messages.enumerated() {
            XCTAssertEqual(try inflate(inflater, compressed[index]).output, message, "message \(index)")
        }
    }

    /// 10 MiB of zeros in about 10 KB: inflation stops at the limit.
    func testDecompressionBombStopsAtTheLimit() throws {
        let bomb = PerMessageDeflater().compress([UInt8](repeating: 0, count: 10 << 20))
        XCTAssertLessThan(bomb.count, 20_000)
        let inflater = WebSocketInflater()
        var output: [UInt8] = []
        XCTAssertFalse(try inflater.inflate(bomb[...], into: &output, limit: 1 << 20))
        XCTAssertEqual(output.count, 1 << 20)
        inflater.abandonMessage()
        // Its window is unknown now: with context takeover the next message cannot be trusted.
        XCTAssertThrowsError(try inflate(inflater, PerMessageDeflater().compress([1, 2, 3])))
    }

    /// Without context takeover an abandoned message costs nothing later.
    func testAbandonedMessageWithoutContextTakeover() throws {
        let deflater = PerMessageDeflater(contextTakeover: false)
        let inflater = WebSocketInflater(contextTakeover: false)
        let first = try inflate(inflater, deflater.compress([UInt8](repeating: 7, count: 100_000)), limit: 10)
        XCTAssertEqual(first.output, [UInt8](repeating: 7, count: 10))
        XCTAssertFalse(first.complete)
        XCTAssertEqual(try inflate(inflater, deflater.compress(messages[0])).output, messages[0])
    }

    func testCorruptData() {
        let inflater = WebSocketInflater()
        XCTAssertThrowsError(try inflate(inflater, [0xFF, 0xFF, 0xFF, 0xFF, 0x00])) { error in
            XCTAssertTrue("\(error)".contains("permessage-deflate"), "\(error)")
        }
    }
}
