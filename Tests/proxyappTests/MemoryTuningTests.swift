#if canImport(Glibc)
import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
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

    func testABufferFreedAtTheTopOfTheHeapStaysForTheNextOne() throws {
        MemoryTuning.apply()
        MemoryTuning.trim()
        // Blocks fill the heap's free holes first (after the rest of the suite there may be tens
        // of MiB of them; held untouched, they cost nothing more); the first one cut from its
        // top is the one.
        let capacity = 4_096
        let held = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: capacity)
        defer { held.deallocate() }
        var heldCount = 0
        var topBlock: UnsafeMutableRawPointer?
        while heldCount < capacity {
            let block = try XCTUnwrap(malloc(Self.blockSize))
            if programBreak() - (UInt(bitPattern: block) + UInt(Self.blockSize)) < UInt(Self.blockSize) {
                memset(block, 1, Self.blockSize)  // touched, as a receive buffer is
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
        // That the idle trim then returns the pages is checked on an event loop's heap below: on
        // the main heap, any thread of the test process may allocate above the block meanwhile.
        MemoryTuning.trim()
    }

    /// The process's resident memory, in bytes (`/proc/self/statm`).
    private func residentBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return try XCTUnwrap(Int(fields[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Whether memory this thread allocates comes from a heap other than the main one (which
    /// grows by moving the program break; the others are mappings of their own).
    private static func thisThreadsArenaIsNotMain() -> Bool {
        let block = UnsafeMutableRawPointer.allocate(byteCount: 128 << 10, alignment: 16)
        defer { block.deallocate() }
        return UInt(bitPattern: block) > UInt(bitPattern: sbrk(0))
    }

    /// What a burst frees on an event loop, in that thread's arena, goes back to the system at
    /// the idle trim, also the free top of an arena other than the main one, which
    /// `malloc_trim` alone leaves in place.
    func testTheIdleTrimReturnsWhatABurstFreedOnAnEventLoop() throws {
        MemoryTuning.apply()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 4)
        defer { try? group.syncShutdownGracefully() }
        // Threads share two arenas: take a loop whose arena is not the main one.
        let loops = Array(group.makeIterator())
        let arenaIsNotMain = try loops.map { try $0.submit { Self.thisThreadsArenaIsNotMain() }.wait() }
        let loop = try XCTUnwrap(zip(loops, arenaIsNotMain).first { $0.1 }?.0, "no event loop uses a second arena")
        // Made on the loop, freed elsewhere (as the spool frees captured blocks), oldest first.
        // Touched, so resident whether they came from the arena's top or from holes earlier
        // tests left in it.
        let blocks = try loop.submit {
            (0..<7).map { _ in  // 3.5 MiB: less than the 4 MiB glibc keeps during a burst
                let block = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: 16)
                block.initializeMemory(as: UInt8.self, repeating: 1, count: Self.blockSize)
                return UInt(bitPattern: block)
            }
        }.wait()
        let duringBurst = try residentBytes()
        for block in blocks {
            UnsafeMutableRawPointer(bitPattern: block)?.deallocate()
        }
        let afterBurst = try residentBytes()
        XCTAssertGreaterThan(afterBurst, duringBurst - (1 << 20), "kept for the next buffers during a burst")
        MemoryTuning.trim(visiting: loops)
        for visited in loops {
            try visited.submit {}.wait()  // after the trim's visit, queued before it
        }
        XCTAssertLessThan(try residentBytes(), afterBurst - (3 << 20), "given back at the idle trim")
    }

    /// The idle trim visits the event loops of a running proxy, and none once it stops: a task
    /// scheduled on a loop that has shut down is an error in NIO.
    func testTheIdleTrimVisitsTheLoopsOnlyWhileTheyRun() throws {
        let visited = NIOLockedValueBox<[Int]>([])
        let idleTrim = IdleTrimLoops { loops in visited.withLockedValue { $0.append(loops.count) } }
        idleTrim.trim()  // before the group exists
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        idleTrim.start(group)
        idleTrim.trim()
        idleTrim.stop()
        try group.syncShutdownGracefully()
        idleTrim.trim()
        XCTAssertEqual(visited.withLockedValue { $0 }, [0, 2, 0])
    }
}
#endif
