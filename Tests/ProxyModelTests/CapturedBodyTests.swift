import Foundation
import ProxyModel
import XCTest

/// A live capture appends in blocks of `CapturedBody.blockSize`; readers still see one body.
final class CapturedBodyTests: XCTestCase {
    private func pattern(_ count: Int, from start: Int = 0) -> [UInt8] {
        (start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    func testAppendsFillBlocksAndReadAsOneBody() {
        var body = CapturedBody()
        var expected: [UInt8] = []
        // Odd-sized pieces, so block edges fall inside appends.
        var offset = 0
        for size in [1, 4_095, 100_000, 300_001, 7, 200_000] {
            let piece = pattern(size, from: offset)
            piece.withUnsafeBytes { body.append($0) }
            expected += piece
            offset += size
        }
        XCTAssertEqual(body.storedCount, expected.count)
        XCTAssertEqual(body.bytes, Data(expected))
        XCTAssertEqual(body.parts.count, (expected.count + CapturedBody.blockSize - 1) / CapturedBody.blockSize)
        XCTAssertTrue(body.parts.dropLast().allSatisfy { $0.count == CapturedBody.blockSize }, "\(body.parts.map(\.count))")
        XCTAssertFalse(body.parts.contains { $0.isEmpty })
    }

    func testABodyInBlocksEqualsTheSameBodyInOneBuffer() {
        let bytes = pattern(CapturedBody.blockSize * 2 + 10)
        var inBlocks = CapturedBody(size: Int64(bytes.count))
        bytes.withUnsafeBytes { inBlocks.append($0, expected: bytes.count) }
        let whole = CapturedBody(bytes: Data(bytes), size: Int64(bytes.count))
        XCTAssertEqual(inBlocks, whole)
        XCTAssertEqual(inBlocks.hashValue, whole.hashValue)
        var other = whole
        other.bytes = Data(pattern(bytes.count, from: 1))
        XCTAssertNotEqual(inBlocks, other)
    }

    func testSettingBytesReplacesTheBlocks() {
        var body = CapturedBody()
        pattern(CapturedBody.blockSize + 1).withUnsafeBytes { body.append($0) }
        body.bytes = Data()
        XCTAssertEqual(body.storedCount, 0)
        XCTAssertEqual(body.parts, [])
        body.bytes = Data("abc".utf8)
        XCTAssertEqual(body.parts, [Data("abc".utf8)])
        XCTAssertEqual(body.storedCount, 3)
    }

    func testEmptyAppendsAddNoBlock() {
        var body = CapturedBody()
        [UInt8]().withUnsafeBytes { body.append($0, expected: 100) }
        XCTAssertEqual(body.parts, [])
        XCTAssertEqual(body, CapturedBody())
    }
}
