import Foundation

/// How much of the capture to keep, oldest flows going first: `proxyapp run --max-flows
/// --max-age --max-db-size` (enforced by the capture writer as it goes) and `proxyapp prune`.
///
/// A capture only grew before: one benchmark run left 2 million flows in 4.6 GB, and a device
/// lab running all day filled its disk. Any limit may be nil (none). With `keepMarked`, marked
/// flows are kept whatever their age and the size, and `maxFlows` counts only the others.
public struct RetentionPolicy: Sendable, Equatable {
    /// Flows kept at most (the newest). Once over it, enforcement removes a little more (up to
    /// 5 % of it) so that a capture at its limit is trimmed in batches.
    public var maxFlows: Int?
    /// Flows started longer ago than this are removed.
    public var maxAge: TimeInterval?
    /// The capture's size on disk kept under this: the database, its write-ahead log and the
    /// body files (`TrafficRepository.captureSize()`).
    public var maxBytes: Int64?
    /// Marked flows are never removed.
    public var keepMarked: Bool

    public init(maxFlows: Int? = nil, maxAge: TimeInterval? = nil, maxBytes: Int64? = nil, keepMarked: Bool = true) {
        self.maxFlows = maxFlows
        self.maxAge = maxAge
        self.maxBytes = maxBytes
        self.keepMarked = keepMarked
    }

    /// True when no limit is set.
    public var keepsEverything: Bool { maxFlows == nil && maxAge == nil && maxBytes == nil }
}

/// What one enforcement of a `RetentionPolicy` did.
public struct PruneOutcome: Sendable, Equatable {
    /// Flows removed.
    public var flowsRemoved = 0
    /// True when it stopped with limits still exceeded (more batches are due), false when the
    /// capture is within them or nothing more may be removed.
    public var moreDue = false

    /// Flows that may still be stored before `maxFlows` is passed, when it holds now (nil: no
    /// such limit, or not known).
    public var flowRoom: Int?
    /// Bytes that may still be stored before `maxBytes` is passed, likewise.
    public var byteRoom: Int64?

    public init(flowsRemoved: Int = 0, moreDue: Bool = false, flowRoom: Int? = nil, byteRoom: Int64? = nil) {
        self.flowsRemoved = flowsRemoved
        self.moreDue = moreDue
        self.flowRoom = flowRoom
        self.byteRoom = byteRoom
    }
}
