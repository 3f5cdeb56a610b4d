import NIOConcurrencyHelpers
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
/// second after its last write (`CaptureWriter(onIdle:)`, through `IdleTrimLoops`), and once a
/// backlog of queued flows is worked off under load (`onBacklogWorkedOff`).
/// `malloc_trim` alone returns the free pages inside each heap but not the free top of an arena
/// other than the main one; glibc trims that top only when a block of 64 KiB or more is freed in
/// that arena. So the trim lowers the threshold, has each event loop (whose arena its buffers
/// came from) free such a block, and the last of them raises the threshold again. Nothing waits
/// for the loops.
enum MemoryTuning {
    @_silgen_name("mallopt")
    private static func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
    @_silgen_name("malloc_trim")
    private static func malloc_trim(_ pad: Int) -> Int32

    private static let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
    private static let arenaMax: Int32 = -8  // M_ARENA_MAX
    private static let trimThresholdParameter: Int32 = -1  // M_TRIM_THRESHOLD
    /// Free bytes at the top of a heap that glibc keeps during a burst.
    static let trimThreshold: Int32 = 4 << 20
    /// glibc's own threshold, in force while the idle trim runs.
    private static let idleTrimThreshold: Int32 = 128 << 10
    /// A block this large, freed, makes glibc trim the top of its arena (64 KiB or more).
    private static let arenaTrimTrigger = 128 << 10

    static func apply() {
        _ = mallopt(mmapThreshold, 1 << 20)
        _ = mallopt(arenaMax, 2)
        _ = mallopt(trimThresholdParameter, trimThreshold)
    }

    /// Returns the free pages of every arena to the system: the free pages inside every heap now,
    /// the free tops of the arenas of this thread and of `eventLoops` as each loop gets to it.
    static func trim(visiting eventLoops: [any EventLoop] = []) {
        _ = mallopt(trimThresholdParameter, idleTrimThreshold)
        trimThisThreadsArenaTop()
        _ = malloc_trim(0)
        guard !eventLoops.isEmpty else {
            _ = mallopt(trimThresholdParameter, trimThreshold)
            return
        }
        let remaining = NIOLockedValueBox(eventLoops.count)
        for loop in eventLoops {
            loop.execute {
                trimThisThreadsArenaTop()
                if remaining.withLockedValue({ count -> Int in
                    count -= 1
                    return count
                }) == 0 {
                    _ = mallopt(trimThresholdParameter, trimThreshold)
                }
            }
        }
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

/// The event loops the idle trim visits: set once the group exists (after the capture writer
/// that runs the trim is made), emptied before the group shuts down, so a trim never schedules
/// work on a loop that has stopped (NIO reports that as an error, and would not run it).
final class IdleTrimLoops: Sendable {
    private let loops = NIOLockedValueBox<[any EventLoop]>([])
    private let trimVisiting: @Sendable ([any EventLoop]) -> Void

    /// `trimVisiting` is the trim itself (`MemoryTuning.trim(visiting:)`; tests watch it).
    init(trimVisiting: @escaping @Sendable ([any EventLoop]) -> Void = { MemoryTuning.trim(visiting: $0) }) {
        self.trimVisiting = trimVisiting
    }

    func start(_ group: any EventLoopGroup) {
        loops.withLockedValue { $0 = Array(group.makeIterator()) }
    }

    func stop() {
        loops.withLockedValue { $0 = [] }
    }

    /// The idle trim, holding the loops while it schedules its visits: none after `stop()`.
    func trim() {
        loops.withLockedValue { trimVisiting($0) }
    }
}
