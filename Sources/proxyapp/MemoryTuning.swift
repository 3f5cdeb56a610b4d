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
/// glibc gives memory back to the system only from the top of a heap, so what bursts of traffic
/// leave free in the middle stays in the process: `trim()`, run by the capture writer a second
/// after its last write (`CaptureWriter(onIdle:)`), returns every free page once a burst is over.
/// Since that trim runs, the one glibc makes on its own is held off (`trimThreshold`): by
/// default it hands back the top of a heap whenever 128 KiB there are free, so during a download
/// every 256 KiB receive buffer and captured block came back from the kernel as fresh pages, and
/// page faults were 21 % of the proxy's CPU.
enum MemoryTuning {
    @_silgen_name("mallopt")
    private static func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
    @_silgen_name("malloc_trim")
    private static func malloc_trim(_ pad: Int) -> Int32

    private static let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
    private static let arenaMax: Int32 = -8  // M_ARENA_MAX
    private static let trimThresholdParameter: Int32 = -1  // M_TRIM_THRESHOLD
    /// Free bytes at the top of a heap that glibc keeps between idle trims.
    static let trimThreshold: Int32 = 8 << 20

    static func apply() {
        _ = mallopt(mmapThreshold, 1 << 20)
        _ = mallopt(arenaMax, 2)
        _ = mallopt(trimThresholdParameter, trimThreshold)
    }

    /// Returns the free pages of every arena to the system (not only the top of the heap).
    static func trim() {
        _ = malloc_trim(0)
    }
}
#else
enum MemoryTuning {
    static func apply() {}
    static func trim() {}
}
#endif
