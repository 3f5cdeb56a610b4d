import Foundation
import ProxyModel
import NIOCore
import NIOHTTP1
import XCTest
@testable import ProxyEngine

/// Body capture keeps the first bytes up to the cap and counts the rest.
final class ExchangeRecorderTests: XCTestCase {
    private func recorder(cap: Int) -> ExchangeRecorder {
        ExchangeRecorder(clientAddress: "127.0.0.1:1", method: "POST", scheme: "http", host: "a.test", port: 80,
                         path: "/", version: .http1_1, headers: ["Host": "a.test", "X-Dup": "1", "x-dup": "2"], cap: cap)
    }

    func testCapturesUpToTheCapAndCountsEverything() {
        var recorder = recorder(cap: 5)
        recorder.requestBody(ByteBuffer(string: "abc"))
        recorder.requestBody(ByteBuffer(string: "defg"))
        recorder.requestBody(ByteBuffer(string: "hij"))
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.requestBody.bytes, Data("abcde".utf8))
        XCTAssertEqual(flow.requestBody.size, 10)
        XCTAssertTrue(flow.requestBody.truncated)
        XCTAssertEqual(flow.requestHeaders.map(\.value), ["a.test", "1", "2"])
        XCTAssertNotNil(flow.finishedAt)
    }

    func testBodyExactlyAtTheCapIsNotTruncated() {
        var recorder = recorder(cap: 4)
        recorder.responseBody(ByteBuffer(string: "abcd"))
        let flow = recorder.finish(error: "boom")
        XCTAssertEqual(flow.responseBody.size, 4)
        XCTAssertFalse(flow.responseBody.truncated)
        XCTAssertEqual(flow.error, "boom")
    }

    /// Phases that did not happen stay -1.
    func testTimingsDefaultToNotApplicable() {
        var recorder = recorder(cap: 4)
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.timings.dns, -1)
        XCTAssertEqual(flow.timings.connect, -1)
        XCTAssertEqual(flow.timings.tls, -1)
        XCTAssertEqual(flow.timings.wait, -1)
    }

    /// Time held at a breakpoint is its own phase: summed over holds, and left out of `send` and
    /// `wait` where it overlaps them (a hold that spans both leaves them at zero).
    func testHoldsAreAPhaseOfTheirOwnAndNotNetworkTime() {
        var recorder = recorder(cap: 4)
        let start = NIODeadline.now()
        recorder.held(from: start - .seconds(20), to: start - .seconds(15))
        recorder.upstreamConnected(.reused)
        recorder.held(from: start - .seconds(10), to: start + .seconds(60))
        recorder.requestFullySent()
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok))
        recorder.held(from: start, to: start)  // an empty hold counts for nothing
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.timings.hold, 75_000, accuracy: 0.001)
        XCTAssertEqual(flow.timings.send, 0, "the request was held all the while it was being sent")
        XCTAssertEqual(flow.timings.wait, 0)
    }

    func testAnExchangeNeverHeldHasNoHoldPhase() {
        var recorder = recorder(cap: 4)
        recorder.upstreamConnected(.reused)
        recorder.requestFullySent()
        XCTAssertEqual(recorder.finish(error: nil).timings.hold, -1)
    }
}

/// Bodies larger than a block are kept in blocks, cut at the cap exactly.
final class ExchangeRecorderBlockTests: XCTestCase {
    func testALargeBodyInManyReadsIsKeptWholeUpToTheCap() {
        let cap = CapturedBody.blockSize * 3 + 5
        var recorder = ExchangeRecorder(clientAddress: "127.0.0.1:1", method: "GET", scheme: "http", host: "a.test",
                                        port: 80, path: "/", version: .http1_1, headers: ["Host": "a.test"], cap: cap)
        let total = cap + 70_000
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "\(total)"]))
        var sent: [UInt8] = []
        var offset = 0
        while offset < total {
            let count = min(16_381, total - offset)
            let piece = (offset..<(offset + count)).map { UInt8(truncatingIfNeeded: $0 ^ ($0 >> 9)) }
            recorder.responseBody(ByteBuffer(bytes: piece))
            sent += piece
            offset += count
        }
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.responseBody.size, Int64(total))
        XCTAssertTrue(flow.responseBody.truncated)
        XCTAssertEqual(flow.responseBody.storedCount, cap)
        XCTAssertEqual(flow.responseBody.bytes, Data(sent.prefix(cap)))
        XCTAssertEqual(flow.responseBody.parts.count, 4)
    }
}

/// Over plain HTTP, large parts of a spooled body reach the spool in their own receive buffers
/// (no copy on the event loop); small parts, parts that would keep a much larger buffer alive
/// and decrypted parts are copied.
final class ExchangeRecorderSharedPartTests: XCTestCase {
    /// A spool that keeps the blocks it is given, as given.
    private final class KeepingSpool: BodySpool, @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [Data] = []
        var blocks: [Data] { lock.withLock { kept } }
        func append(_ block: Data) -> Bool { lock.withLock { kept.append(block) }; return true }
        func finish() {}
        func contents() -> Data { lock.withLock { kept.reduce(into: Data()) { $0.append($1) } } }
    }

    private static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ seed) }
    }

    private func spooledRecorder(_ spool: KeepingSpool, cap: Int = 16 << 20, scheme: String = "http") -> ExchangeRecorder {
        var recorder = ExchangeRecorder(clientAddress: "127.0.0.1:1", method: "GET", scheme: scheme, host: "a.test",
                                        port: 80, path: "/", version: .http1_1, headers: ["Host": "a.test"], cap: cap,
                                        spool: { spool })
        recorder.responseBody(ByteBuffer(bytes: Self.bytes(CapturedBody.blockSize, seed: 1)))  // spooling from here
        return recorder
    }

    private func address(_ data: Data) -> UnsafeRawPointer? {
        data.withUnsafeBytes { $0.baseAddress }
    }

    func testALargePartGoesToTheSpoolInItsOwnBuffer() throws {
        let spool = KeepingSpool()
        var recorder = spooledRecorder(spool)
        var part = ByteBuffer(bytes: Self.bytes(200_000, seed: 2))
        let partAddress = part.withUnsafeReadableBytes { $0.baseAddress }
        recorder.responseBody(part)
        let shared = try XCTUnwrap(spool.blocks.last)
        XCTAssertEqual(address(shared), partAddress, "not copied")
        part.clear()
        part.writeBytes(Self.bytes(200_000, seed: 3))  // the buffer is reused: copied on write, not overwritten
        XCTAssertEqual(shared, Data(Self.bytes(200_000, seed: 2)))
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.responseBody.bytes, Data(Self.bytes(CapturedBody.blockSize, seed: 1) + Self.bytes(200_000, seed: 2)))
    }

    func testSmallPartsAndPartsOfMuchLargerBuffersAreCopied() throws {
        let spool = KeepingSpool()
        var recorder = spooledRecorder(spool)
        let small = ByteBuffer(bytes: Self.bytes(1_000, seed: 4))
        recorder.responseBody(small)
        var large = ByteBuffer(bytes: Self.bytes(300_000, seed: 5))
        let slice = try XCTUnwrap(large.readSlice(length: 100_000))  // a third of its storage
        recorder.responseBody(slice)
        let flow = recorder.finish(error: nil)
        for block in spool.blocks {
            XCTAssertNotEqual(address(block), slice.withUnsafeReadableBytes { $0.baseAddress })
            XCTAssertNotEqual(address(block), small.withUnsafeReadableBytes { $0.baseAddress })
        }
        XCTAssertEqual(flow.responseBody.storedCount, CapturedBody.blockSize + 101_000)
        XCTAssertEqual(flow.responseBody.bytes.suffix(101_000), Data(Self.bytes(1_000, seed: 4) + Self.bytes(300_000, seed: 5).prefix(100_000)))
    }

    /// Decrypted bytes sit in NIOSSL's buffer, which it reuses: they are copied.
    func testDecryptedPartsAreCopied() throws {
        let spool = KeepingSpool()
        var recorder = spooledRecorder(spool, scheme: "https")
        let part = ByteBuffer(bytes: Self.bytes(200_000, seed: 7))
        recorder.responseBody(part)
        XCTAssertNotEqual(address(try XCTUnwrap(spool.blocks.last)), part.withUnsafeReadableBytes { $0.baseAddress })
        XCTAssertEqual(recorder.finish(error: nil).responseBody.bytes.suffix(200_000), Data(Self.bytes(200_000, seed: 7)))
    }

    /// A part past the cap is cut there, copied: the cap holds whatever the path.
    func testThePartThatCrossesTheCapIsCutThere() {
        let spool = KeepingSpool()
        let cap = CapturedBody.blockSize + 50_000
        var recorder = spooledRecorder(spool, cap: cap)
        recorder.responseBody(ByteBuffer(bytes: Self.bytes(200_000, seed: 6)))
        let flow = recorder.finish(error: nil)
        XCTAssertEqual(flow.responseBody.storedCount, cap)
        XCTAssertTrue(flow.responseBody.truncated)
        XCTAssertEqual(flow.responseBody.bytes.suffix(50_000), Data(Self.bytes(200_000, seed: 6).prefix(50_000)))
    }
}
