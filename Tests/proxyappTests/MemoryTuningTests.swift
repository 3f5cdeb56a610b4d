#if canImport(Glibc)
import Glibc
import XCTest

@testable import proxyapp

/// The allocator settings of `proxyapp run`: glibc keeps what a burst frees at the top of a heap
/// for the next buffers (no page faults to get it back), and the idle trim returns it.
///
/// Watched on the main heap through the program break (`sbrk(0)`), which glibc lowers when it
/// trims; nothing between the reads allocates.
final class MemoryTuningTests: XCTestCase {
    private static let blockSize = 512 << 10  // below the 1 MiB mmap threshold: from the heap

    private func programBreak() -> UInt {
        UInt(bitPattern: sbrk(0))
    }

    func testABufferFreedAtTheTopOfTheHeapStaysUntilTheIdleTrim() throws {
        MemoryTuning.apply()
        MemoryTuning.trim()
        // Blocks fill the heap's free holes first; the first one cut from its top is the one.
        let held = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: 64)
        defer { held.deallocate() }
        var heldCount = 0
        var topBlock: UnsafeMutableRawPointer?
        while heldCount < 64 {
            let block = try XCTUnwrap(malloc(Self.blockSize))
            memset(block, 1, Self.blockSize)  // touched, as a receive buffer is
            if programBreak() - (UInt(bitPattern: block) + UInt(Self.blockSize)) < UInt(Self.blockSize) {
                topBlock = block
                break
            }
            held[heldCount] = block
            heldCount += 1
        }
        let breakWithBlock = programBreak()
        free(try XCTUnwrap(topBlock, "no block came from the top of the heap"))
        let breakAfterFree = programBreak()
        for index in 0..<heldCount {
            free(held[index])
        }
        XCTAssertEqual(breakAfterFree, breakWithBlock,
                       "glibc's own trim (past 128 KiB free at the top, by default) would have lowered the break")
        MemoryTuning.trim()
        XCTAssertLessThan(programBreak(), breakWithBlock - UInt(Self.blockSize) / 2, "the idle trim returns the pages")
    }
}
#endif
