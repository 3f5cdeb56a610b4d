import NIOCore

#if canImport(Glibc)
import Glibc

/// glibc allocator settings for a long-running proxy, applied once at start, and the trim that
/// gives memory back after a burst of traffic.
///
/// Captured bodies are buffers of up to 16 MiB. By default glibc raises its mmap threshold to
/// the size of the largest block freed, so after one big download every later 16 MiB buffer
/// comes from the heap and stays in the process when freed (peak RSS doubled in the bench).
/// A fixed threshold keeps big buffers in their own mappings, returned to the system on free;
/// two arenas are enough for two event loops and the capture writer.
///
/// During a burst glibc keeps up to `trimThreshold` free at the top of each heap: by default it
/// hands that memory back whenever 128 KiB there are free, so during a download every 256 KiB
/// receive buffer and captured block came back from the kernel as fresh pages, and page faults
/// were 21 % of the proxy's CPU.
///
/// After the burst, `trim(visiting:)` gives back every free page: the capture writer runs it a
/// second after its last write (`CaptureWriter(onIdle:)`). `malloc_trim` alone returns the free
/// pages inside each heap but not the free top of an arena other than the main one; glibc trims
/// that top only when a block of 64 KiB or more is freed in that arena. So the trim lowers the
/// threshold, has each event loop (whose arena its buffers came from) free such a block, and
/// raises the threshold again.
enum MemoryTuning {
    @_silgen_name("mallopt")
    private static func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
    @_silgen_name("malloc_trim")
    private static func malloc_trim(_ pad: Int) -> Int32

    private static let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
    private static let arenaMax: Int32 = -8  // M_ARENA_MAX
    private static let trimThresholdParameter: Int32 = -1  // M_TRIM_THRESHOLD
    /// Free bytes at the top of a heap that glibc keeps during a burst.
    static let trimThreshold: Int32 = 8 << 20
    /// glibc's own threshold, in force while the idle trim runs.
    private static let idleTrimThreshold: Int32 = 128 << 10
    /// A block this large, freed, makes glibc trim the top of its arena (64 KiB or more).
    private static let arenaTrimTrigger = 128 << 10

    static func apply() {
        _ = mallopt(mmapThreshold, 1 << 20)
        _ = mallopt(arenaMax, 2)
        _ = mallopt(trimThresholdParameter, trimThreshold)
    }

    /// Returns the free pages of every arena to the system: the free tops of the arenas of this
    /// thread and of `eventLoops`, then the free pages inside every heap.
    static func trim(visiting eventLoops: [any EventLoop] = []) {
        _ = mallopt(trimThresholdParameter, idleTrimThreshold)
        let visits = eventLoops.map { $0.submit { trimThisThreadsArenaTop() } }
        trimThisThreadsArenaTop()
        if let first = eventLoops.first {
            _ = try? EventLoopFuture.andAllComplete(visits, on: first).wait()
        }
        _ = mallopt(trimThresholdParameter, trimThreshold)
        _ = malloc_trim(0)
    }

    private static func trimThisThreadsArenaTop() {
        // Swift's allocator calls, which the optimizer does not remove as a pair.
        UnsafeMutableRawPointer.allocate(byteCount: arenaTrimTrigger, alignment: 16).deallocate()
    }
}
#else
enum MemoryTuning {
    static func apply() {}
    static func trim(visiting eventLoops: [any EventLoop] = []) {}
}
#endif
