import CaptureStore
import Dispatch
import Foundation

/// Which part of the id space a list view has read, and how to read the next part: the tail
/// (flows stored since the last poll) and the next slice of older flows.
///
/// A value owned by `FlowListFeed` and only used on its queue. Every view, filtered or not,
/// starts with the newest slice and walks back: reading even the bare ids of a million flows
/// walks the whole table (its rows hold the bodies), so the first screen must not wait for it.
/// The slice size adapts so one slice takes about `sliceTarget`, short enough that window
/// requests and a new filter never wait long behind it.
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

    /// True once the first read (the newest slice) succeeded.
    var hasStarted: Bool { oldestCovered != nil }

    /// True when nothing older is left to read.
    var isComplete: Bool {
        guard let oldestCovered else { return false }
        return oldestCovered <= 1
    }

    /// The matching ids stored after `newestCovered`, ascending. The first read covers the
    /// newest slice only.
    mutating func readNewer(_ repository: any FlowStore) throws -> [Int64] {
        let query = query ?? FlowQuery()
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
    mutating func readOlder(_ repository: any FlowStore) throws -> [Int64] {
        guard let oldest = oldestCovered, oldest > 1 else { return [] }
        let query = query ?? FlowQuery()
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
