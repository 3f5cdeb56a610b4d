import Foundation
import ProxyModel
import XCTest

/// A spooled body (`CapturedBody.startSpooling(_:)`) hands each full block to its spool as it
/// fills, keeps at most one block in memory, and still reads back whole.
final class CapturedBodySpoolingTests: XCTestCase {
    /// A spool that keeps what it is given, and refuses after `accepting` blocks.
    private final class RecordingSpool: BodySpool, @unchecked Sendable {
        private let lock = NSLock()
        private var blocks: [Data] = []
        private var remaining: Int
        private(set) var finishCount = 0

        init(accepting: Int = .max) { remaining = accepting }

        var received: [Data] { lock.withLock { blocks } }

        func append(_ block: Data) -> Bool {
            lock.withLock {
                guard remaining > 0 else { return false }
                remaining -= 1
                blocks.append(block)
                return true
            }
        }

        func finish() { lock.withLock { finishCount += 1 } }

        func contents() -> Data { lock.withLock { blocks.reduce(into: Data()) { $0.append($1) } } }
    }

    private let block = CapturedBody.blockSize

    private func pattern(_ count: Int, from start: Int = 0) -> [UInt8] {
        (start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 10) }
    }

    private func append(_ bytes: [UInt8], to body: inout CapturedBody, pieces: Int = 16_384) {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + pieces, bytes.count)
            bytes[offset..<end].withUnsafeBytes { body.append($0) }
            offset = end
        }
    }

    func testFullBlocksLeaveMemoryAsTheyFillAndTheBodyReadsBackWhole() {
        let bytes = pattern(block * 5 + 12_345)
        let spool = RecordingSpool()
        var body = CapturedBody()
        append(Array(bytes[..<block]), to: &body)
        XCTAssertEqual(body.heldCount, block)
        body.startSpooling(spool)
        XCTAssertEqual(spool.received.count, 1, "the block already full goes at once")
        XCTAssertEqual(body.heldCount, 0)
        var offset = block
        while offset < bytes.count {  // an odd piece size, so block edges fall inside appends
            let end = min(offset + 10_007, bytes.count)
            bytes[offset..<end].withUnsafeBytes { body.append($0) }
            offset = end
            XCTAssertLessThan(body.heldCount, block, "never a full block in memory")
        }
        XCTAssertEqual(body.storedCount, bytes.count)
        XCTAssertEqual(spool.received.count, 5)
        XCTAssertTrue(spool.received.allSatisfy { $0.count == block })
        XCTAssertEqual(body.heldCount, 12_345)
        XCTAssertEqual(body.bytes, Data(bytes), "the spool's part and the part in memory, in order")

        body.finishSpooling()
        XCTAssertEqual(spool.received.count, 6, "the last, partial block goes at the end")
        XCTAssertEqual(spool.finishCount, 1)
        XCTAssertEqual(body.heldCount, 0)
        XCTAssertEqual(spool.contents(), Data(bytes))
        XCTAssertEqual(body.bytes, Data(bytes))
        XCTAssertFalse(body.truncated)
        XCTAssertTrue(body.spool === spool)
    }

    func testARefusedBlockEndsTheStoredPrefixThere() {
        let spool = RecordingSpool(accepting: 2)
        var body = CapturedBody()
        body.startSpooling(spool)
        let bytes = pattern(block * 4 + 100)
        append(bytes, to: &body)
        XCTAssertTrue(body.truncated)
        XCTAssertEqual(body.storedCount, 2 * block, "what the spool took, nothing after it")
        XCTAssertEqual(body.heldCount, 0)
        body.finishSpooling()
        XCTAssertEqual(body.bytes, Data(bytes[..<(2 * block)]))
        XCTAssertEqual(spool.received.count, 2)
    }

    func testSettingBytesEndsTheSpooling() {
        let spool = RecordingSpool()
        var body = CapturedBody()
        append(pattern(block * 2), to: &body)
        body.startSpooling(spool)
        body.bytes = Data("kept".utf8)
        XCTAssertNil(body.spool)
        XCTAssertEqual(body.storedCount, 4)
        XCTAssertEqual(body.heldCount, 4)
        XCTAssertEqual(body.bytes, Data("kept".utf8))
    }

    func testAnUnspooledBodyHoldsEverythingItStores() {
        var body = CapturedBody()
        append(pattern(block * 3), to: &body)
        XCTAssertEqual(body.heldCount, block * 3)
        body.finishSpooling()  // nothing to do without a spool
        XCTAssertEqual(body.parts.count, 3)
    }

    /// Shared bytes of a spooled body go to the spool as they are (no block is filled in memory),
    /// after the partial block that was waiting, so the order holds.
    func testSharedBytesOfASpooledBodyGoStraightToTheSpoolInOrder() {
        let bytes = pattern(block * 3 + 4_321)
        let spool = RecordingSpool()
        var body = CapturedBody()
        append(Array(bytes[..<(block + 100)]), to: &body)
        body.startSpooling(spool)
        XCTAssertEqual(body.heldCount, 100, "a partial block waits in memory")
        let shared = Data(bytes[(block + 100)..<(block * 3)])
        body.append(shared: shared)
        XCTAssertEqual(spool.received.map(\.count), [block, 100, shared.count], "partial block first, then the shared bytes whole")
        XCTAssertEqual(body.heldCount, 0)
        append(Array(bytes[(block * 3)...]), to: &body)
        XCTAssertEqual(body.storedCount, bytes.count)
        body.finishSpooling()
        XCTAssertEqual(spool.contents(), Data(bytes))
        XCTAssertEqual(body.bytes, Data(bytes))
        XCTAssertFalse(body.truncated)
    }

    func testSharedBytesTheSpoolRefusesEndTheStoredPrefix() {
        let spool = RecordingSpool(accepting: 1)
        var body = CapturedBody()
        append(pattern(block), to: &body)
        body.startSpooling(spool)
        body.append(shared: Data(pattern(block, from: block)))
        XCTAssertTrue(body.truncated)
        XCTAssertEqual(body.storedCount, block)
        body.append(shared: Data(pattern(10)))
        XCTAssertEqual(body.storedCount, block, "nothing is stored after a refusal")
        XCTAssertEqual(spool.received.count, 1)
    }

    func testSharedBytesOfABodyInMemoryAreCopiedIntoBlocks() {
        var body = CapturedBody()
        let bytes = pattern(block + 10)
        body.append(shared: Data(bytes))
        XCTAssertNil(body.spool)
        XCTAssertEqual(body.heldCount, bytes.count)
        XCTAssertEqual(body.parts.map(\.count), [block, 10])
        XCTAssertEqual(body.bytes, Data(bytes))
    }
}
