/// What the capture writer did with the flows it was given, so nothing is lost silently.
///
/// Every flow handed to `CaptureWriter.record` ends up counted exactly once in `flowsWritten`,
/// `flowsDropped` or `flowsFailed`, or is still queued. The CLI shows these at exit and the
/// tests check them exactly.
public struct CaptureStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Flows committed to the database.
    public var flowsWritten: Int
    /// Flows thrown away before reaching the database: the queue was at `maxQueuedFlows`, or
    /// `record` was called after `close`.
    public var flowsDropped: Int
    /// Captured body bytes stripped from queued flows because the queue held
    /// `maxQueuedBodyBytes` already. Those flows were still stored, with `truncated` set.
    /// (Bodies of whole dropped flows are not counted here.)
    public var bodyBytesDropped: Int
    /// Batches whose transaction failed (disk full, file gone, locked beyond the busy timeout).
    public var batchesFailed: Int
    /// Flows stored without their bodies, to make room in the queue.
    public var flowsStripped: Int
    /// Flows lost with the failed batches.
    public var flowsFailed: Int

    public init(flowsWritten: Int = 0, flowsDropped: Int = 0, bodyBytesDropped: Int = 0,
                batchesFailed: Int = 0, flowsStripped: Int = 0, flowsFailed: Int = 0) {
        self.flowsWritten = flowsWritten
        self.flowsDropped = flowsDropped
        self.bodyBytesDropped = bodyBytesDropped
        self.batchesFailed = batchesFailed
        self.flowsStripped = flowsStripped
        self.flowsFailed = flowsFailed
    }

    public var description: String {
        "\(flowsWritten) flows written, \(flowsDropped) dropped, \(flowsFailed) lost in "
            + "\(batchesFailed) failed batches, \(flowsStripped) stored without bodies "
            + "(\(bodyBytesDropped) body bytes dropped)"
    }
}
