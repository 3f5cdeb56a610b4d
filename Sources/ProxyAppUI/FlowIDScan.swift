import CaptureStore
import Dispatch
import Foundation

/// Which part of the id space a list view has read, and how to read the next part: the tail
/// (flows stored since the last poll) and, for a filtered view, the next slice of older flows.
///
/// A value owned by `FlowListFeed` and only used on its queue. Unfiltered views read every id at
/// once (`flowIDs(after:)` is one index scan). Filtered views start with the newest slice and
/// walk back; the slice size adapts so one slice takes about `sliceTarget`, short enough that
/// window requests and a new filter never wait long behind it.
struct FlowIDScan: Sendable {
    let query: FlowQuery?
    /// The highest id the view has covered.
    private(set) var newestCovered: Int64 = 0
    /// The lowest id the backward scan has covered; nil before the first read.
    private(set) var oldestCovered: Int64?
    private(set) var sliceSize: Int64

    static let sliceTarget: Double = 0.03
    static let sliceBounds: ClosedRange<Int64> = 500...500_000

    init(query: FlowQuery?, sliceSize: Int64) {
        self.query = query
        self.sliceSize = min(max(sliceSize, Self.sliceBounds.lowerBound), Self.sliceBounds.upperBound)
    }

    /// True when nothing older is left to read.
    var isComplete: Bool {
        guard query != nil else { return true }
        guard let oldestCovered else { return false }
        return oldestCovered <= 1
    }

    /// The matching ids stored after `newestCovered`, ascending. The first read of a filtered
    /// view covers the newest slice only.
    mutating func readNewer(_ repository: TrafficRepository) throws -> [Int64] {
        guard let query else {
            let ids = try repository.flowIDs(after: newestCovered)
            if let last = ids.last { newestCovered = last }
            return ids
        }
        let last = try repository.lastFlowID()
        guard last > newestCovered else {
            if oldestCovered == nil { oldestCovered = 1 }  // an empty capture: nothing older either
            return []
        }
        let lower = oldestCovered == nil ? max(1, last - sliceSize + 1) : newestCovered + 1
        let ids = try timed { try repository.matchingFlowIDs(in: lower...last, query: query) }
        if oldestCovered == nil { oldestCovered = lower }
        newestCovered = last
        return ids
    }

    /// The matching ids of the next older slice, ascending.
    mutating func readOlder(_ repository: TrafficRepository) throws -> [Int64] {
        guard let query, let oldest = oldestCovered, oldest > 1 else { return [] }
        let lower = max(1, oldest - sliceSize)
        let ids = try timed { try repository.matchingFlowIDs(in: lower...(oldest - 1), query: query) }
        oldestCovered = lower
        return ids
    }

    /// Runs `read` and resizes the next slice toward `sliceTarget` seconds.
    private mutating func timed(_ read: () throws -> [Int64]) rethrows -> [Int64] {
        let start = DispatchTime.now().uptimeNanoseconds
        let ids = try read()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let scale = min(4, max(0.25, Self.sliceTarget / max(elapsed, 1e-4)))
        sliceSize = min(max(Int64(Double(sliceSize) * scale), Self.sliceBounds.lowerBound), Self.sliceBounds.upperBound)
        return ids
    }
}
