import Foundation
import Logging
import ProxyModel

/// The state shared between `CaptureWriter`'s callers and its writer thread, and the thread's
/// loop.
///
/// Lock discipline: every stored `var` below the "guarded by `condition`" mark is read and
/// written only with `condition` locked; the ones under "writer thread only" only on the
/// writer thread. Database work and `onCommitted` run with the lock released, so `record`
/// never waits on them. That is what makes the `@unchecked Sendable` sound.
final class CaptureWriterState: @unchecked Sendable {
    private let backend: any CaptureBackend
    private let logger: Logger
    private let onCommitted: (@Sendable ([Flow]) -> Void)?
    /// Run once the queue has stayed empty for `idleDelay` after a batch was written.
    private let onIdle: (@Sendable () -> Void)?
    /// Run when a backlog of `backlogTrimDepth` items or more has been worked off.
    private let onBacklogWorkedOff: (@Sendable () -> Void)?
    /// Queued items that make a backlog worth giving memory back after, once it is worked off:
    /// a queued HTTPS flow with a 1 KiB body holds about 2.8 KiB, so a writer held up for 2 s
    /// (another process holding the write lock, a slow `fsync`) left ~84 MiB of freed memory
    /// in the process for as long as traffic kept the queue from staying empty. Traffic that
    /// never makes a backlog this deep never pays for a trim.
    static let backlogTrimDepth = 4_096
    /// How long the queue stays empty after a write before `onIdle` runs.
    static let idleDelay: TimeInterval = 1
    /// A batch was written since `onIdle` last ran, at `lastWrittenAt`.
    private var idlePending = false
    private var lastWrittenAt = Date()
    private let maxBatchSize: Int
    private let maxQueuedFlows: Int
    /// Queued body bytes that make a batch due at once, whatever its age: a few large captured
    /// bodies (downloads of up to the 16 MiB cap) must not sit in memory for the batch delay
    /// while more arrive.
    static let bodyBytesDue = 4 << 20
    private let maxBatchDelay: TimeInterval

    private let condition = NSCondition()

    // Guarded by `condition`.
    private var queue: CaptureQueue
    /// When the flows now queued started waiting for their batch.
    private var batchOpenedAt = Date()
    /// Flows accepted into the queue, ever.
    private var acceptedTotal = 0
    /// Flows taken out of the queue by the writer, ever.
    private var dequeuedTotal = 0
    /// Flows whose batch finished (committed or failed), ever.
    private var finishedTotal = 0
    /// `flush` callers want everything up to this count committed now.
    private var flushTarget = 0
    private var closing = false
    private var finished = false
    private var droppedAfterClose = 0
    private var nextOpenKey: UInt64 = 0
    private var flowsWritten = 0
    private var batchesFailed = 0
    private var flowsFailed = 0
    private var thread: Thread?

    // Writer thread only.
    private var failing = false
    /// The store was unreachable at the last attempt (`CaptureBackend.isUnreachable`).
    private var unreachable = false
    /// Flows lost at close because the store was still unreachable.
    private var unstoredAtClose = 0
    /// The deepest the queue was at a dequeue since the last trim (`backlogTrimDepth`).
    private var deepestBacklog = 0
    private var failuresInOutage = 0
    private var lastSeenDropped = 0
    private var lastSeenStripped = 0
    private var droppingFlows = false
    private var strippingBodies = false
    /// Row ids of the open flows written so far (WebSockets whose messages may still come).
    private var openRows: [OpenFlowKey: Int64] = [:]

    /// What the capture keeps (`RetentionPolicy`), enforced between batches.
    private let retention: RetentionPolicy
    /// When retention is looked at next; writer thread only.
    private var nextRetentionCheck = Date.distantPast
    /// Flows and bytes written since the last retention pass, against the room it found left
    /// under `maxFlows` and `maxBytes` (a pass is due once either is used up); writer thread only.
    private var writtenSinceRetention = (flows: 0, bytes: 0)
    private var retentionRoom: (flows: Int?, bytes: Int64?) = (nil, nil)
    /// A retention pass stopped with more to remove: it goes on whenever the queue is empty.
    private var retentionMoreDue = false
    /// How often retention is looked at while flows are written (`Limits.retentionInterval`).
    private let retentionInterval: TimeInterval
    /// Flows removed per retention transaction (a capture batch waits for one at most).
    static let retentionBatchSize = 2_000

    init(backend: any CaptureBackend, limits: CaptureWriter.Limits, logger: Logger,
         retention: RetentionPolicy = RetentionPolicy(),
         onCommitted: (@Sendable ([Flow]) -> Void)?, onIdle: (@Sendable () -> Void)? = nil,
         onBacklogWorkedOff: (@Sendable () -> Void)? = nil) {
        self.backend = backend
        self.retention = retention
        self.logger = logger
        self.onCommitted = onCommitted
        self.onIdle = onIdle
        self.onBacklogWorkedOff = onBacklogWorkedOff
        maxBatchSize = limits.maxBatchSize
        maxQueuedFlows = limits.maxQueuedFlows
        maxBatchDelay = Self.seconds(limits.maxBatchDelay)
        retentionInterval = Self.seconds(limits.retentionInterval)
        queue = CaptureQueue(maxFlows: limits.maxQueuedFlows, maxBodyBytes: limits.maxQueuedBodyBytes)
    }

    /// `duration` in seconds, never negative.
    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return max(0, Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    func start(_ thread: Thread) {
        condition.lock()
        self.thread = thread
        condition.unlock()
        thread.start()
    }

    // MARK: - Callers' side

    func record(_ flow: consuming Flow) {
        // Moved into the queue, not copied: the closure takes it out of the optional.
        var pending = Optional(flow)
        accept { $0.enqueue(pending.take()!) }
    }

    func recordOpen(_ flow: Flow) -> OpenFlowKey {
        condition.lock()
        nextOpenKey += 1
        let key = OpenFlowKey(nextOpenKey)
        condition.unlock()
        accept { $0.enqueue(flow, open: key) }
        return key
    }

    func append(_ messages: [CapturedMessage], to key: OpenFlowKey) {
        guard !messages.isEmpty else { return }
        accept(isFlow: false) { $0.enqueue(messages, to: key) }
    }

    func finish(_ key: OpenFlowKey, with end: OpenFlowEnd) {
        accept(isFlow: false) { $0.enqueue(end: end, of: key) }
    }

    /// Queues one item and wakes the writer when a batch is due.
    private func accept(isFlow: Bool = true, _ enqueue: (inout CaptureQueue) -> CaptureQueue.Outcome) {
        condition.lock()
        defer { condition.unlock() }
        if closing {
            if isFlow { droppedAfterClose += 1 }
            return
        }
        let wasEmpty = queue.isEmpty
        if enqueue(&queue) == .dropped { return }
        acceptedTotal += 1
        if wasEmpty {
            batchOpenedAt = Date()
            condition.broadcast()  // the writer may be waiting for work
        } else if queue.count == maxBatchSize {
            condition.broadcast()  // a full batch is due now
        }
        if queue.queuedBodyBytes >= Self.bodyBytesDue {
            condition.broadcast()  // big bodies are waiting: write them now rather than hold them
        }
    }

    func flush() {
        condition.lock()
        defer { condition.unlock() }
        guard !isWriterThread else { return }
        let target = acceptedTotal
        if target > flushTarget {
            flushTarget = target
            condition.broadcast()
        }
        while finishedTotal < target && !finished {
            condition.wait()
        }
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        closing = true
        condition.broadcast()
        guard !isWriterThread else { return }
        while !finished {
            condition.wait()
        }
    }

    func requestClose() {
        condition.lock()
        closing = true
        condition.broadcast()
        condition.unlock()
    }

    var statistics: CaptureStatistics {
        condition.lock()
        defer { condition.unlock() }
        return CaptureStatistics(
            flowsWritten: flowsWritten, flowsDropped: queue.flowsDropped + droppedAfterClose,
            bodyBytesDropped: queue.bodyBytesDropped, batchesFailed: batchesFailed,
            flowsStripped: queue.flowsStripped, flowsFailed: flowsFailed)
    }

    /// Whether the caller is the writer thread. Call with `condition` locked.
    private var isWriterThread: Bool {
        thread.map { Thread.current === $0 } ?? false
    }

    // MARK: - Writer thread

    func run() {
        enforceRetention()
        while let written = writeNextBatch() {
            // The batch (and its bodies) is gone by now: checkpointing does not hold it.
            backend.didCommit(bytes: written, logger: logger)
            if retentionIsDue { enforceRetention() }
        }
        logUnstoredAtClose()
        backend.close(logger: logger)
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the next batch, commits it and counts it; returns the bytes written, or nil
    /// once closing and drained.
    private func writeNextBatch() -> Int? {
        guard let (batch, dropped, stripped) = nextBatch() else { return nil }
        logDrops(dropped: dropped, stripped: stripped)
        var written = 0
        let committed = commit(batch, bytes: &written)
        writtenSinceRetention.bytes += written
        if let committed, let onCommitted {
            onCommitted(committed)
        }
        let flowCount = batch.reduce(0) { count, item in
            if case .flow = item { return count + 1 }
            return count
        }
        writtenSinceRetention.flows += flowCount
        condition.lock()
        if committed != nil {
            flowsWritten += flowCount
        } else {
            batchesFailed += 1
            flowsFailed += flowCount
        }
        finishedTotal += batch.count
        idlePending = true
        lastWrittenAt = Date()
        let backlogWorkedOff = deepestBacklog >= Self.backlogTrimDepth && queue.count < maxBatchSize
        condition.broadcast()
        condition.unlock()
        if backlogWorkedOff {
            deepestBacklog = 0
            onBacklogWorkedOff?()
        }
        return written
    }

    /// Waits until a batch is due and takes it, with the drop counters at that moment; nil once
    /// closing and drained.
    private func nextBatch() -> (batch: [CaptureItem], dropped: Int, stripped: Int)? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if queue.isEmpty {
                if closing { return nil }
                if retentionMoreDue {  // nothing to write: go on removing, a batch at a time
                    condition.unlock()
                    enforceRetention()
                    condition.lock()
                    continue
                }
                if idlePending {
                    let deadline = lastWrittenAt.addingTimeInterval(Self.idleDelay)
                    if Date() >= deadline {
                        idlePending = false
                        deepestBacklog = 0
                        queue.releaseSpareCapacity()
                        condition.unlock()
                        backend.releaseMemory()
                        onIdle?()
                        condition.lock()
                    } else {
                        _ = condition.wait(until: deadline)
                    }
                    continue
                }
                condition.wait()
                continue
            }
            if queue.count >= maxBatchSize || closing || flushTarget > dequeuedTotal { break }
            if queue.queuedBodyBytes >= Self.bodyBytesDue { break }
            let deadline = batchOpenedAt.addingTimeInterval(maxBatchDelay)
            if Date() >= deadline { break }
            _ = condition.wait(until: deadline)
        }
        deepestBacklog = max(deepestBacklog, queue.count)
        let batch = queue.dequeueItems(maxCount: maxBatchSize)
        dequeuedTotal += batch.count
        if !queue.isEmpty { batchOpenedAt = Date() }
        return (batch, queue.flowsDropped, queue.flowsStripped)
    }

    /// A retention pass is due: the interval has passed, or the flows or bytes written since
    /// the last one used up the room it found (so a capture at its limit is trimmed as it grows,
    /// and one far below it is not counted after every batch).
    private var retentionIsDue: Bool {
        if Date() >= nextRetentionCheck { return true }
        if let room = retentionRoom.flows, writtenSinceRetention.flows >= room { return true }
        if let room = retentionRoom.bytes, Int64(writtenSinceRetention.bytes) >= room { return true }
        return false
    }

    /// Removes one batch of the flows `retention` does not keep (writer thread). A failure is
    /// logged and tried again at the next check; capture goes on either way.
    private func enforceRetention() {
        nextRetentionCheck = Date().addingTimeInterval(retentionInterval)
        retentionMoreDue = false
        guard !retention.keepsEverything else { return }
        do {
            let outcome = try backend.enforce(retention, batchSize: Self.retentionBatchSize, maxBatches: 1,
                                                 protected: Set(openRows.values))
            retentionMoreDue = outcome.moreDue
            retentionRoom = (outcome.flowRoom, outcome.byteRoom)
            writtenSinceRetention = (0, 0)
            // Still over: the next batch written is followed by another removal.
            if outcome.moreDue { nextRetentionCheck = Date() }
            if outcome.flowsRemoved > 0 {
                logger.debug("capture retention removed flows", metadata: ["count": "\(outcome.flowsRemoved)"])
            }
        } catch {
            // An unreachable store is said once by the writes; retention just waits for it.
            if backend.isUnreachable(error) {
                logger.debug("capture retention waits for the store", metadata: ["error": "\(error)"])
            } else {
                logger.warning("capture retention could not remove old flows: \(CaptureErrorText.describe(error))")
            }
        }
    }

    /// Writes one batch; the flows with their ids, or nil when the batch was lost.
    ///
    /// While the store is unreachable (`CaptureBackend.isUnreachable`) the batch is kept and
    /// tried again with back-off, and flows keep queueing behind it up to the queue's bounds
    /// (then they are dropped and counted): a database that is down for a while loses nothing
    /// short of that. Once closing, a batch for a store still unreachable is lost at once, so
    /// shutdown never waits on a dead server.
    private func commit(_ items: [CaptureItem], bytes: inout Int) -> [Flow]? {
        var delay = Self.firstRetryDelay
        while true {
            if unreachable && isClosing {
                unstoredAtClose += items.reduce(0) { count, item in
                    if case .flow = item { return count + 1 }
                    return count
                }
                return nil
            }
            do {
                // On a copy: a batch that fails leaves the rows it would have added unknown.
                var rows = openRows
                let ids = try backend.write(items, openRows: &rows)
                openRows = rows
                for item in items {
                    bytes += item.loggedBytes + 512
                }
                noteWorking()
                guard onCommitted != nil else { return [] }
                var flows: [Flow] = []
                flows.reserveCapacity(ids.count)
                for item in items {
                    if case .flow(let flow, _) = item { flows.append(flow) }
                }
                for index in flows.indices { flows[index].id = ids[index] }
                return flows
            } catch {
                if backend.isUnreachable(error) {
                    noteUnreachable(error)
                    logDrops(dropped: currentDrops.dropped, stripped: currentDrops.stripped)
                    waitBeforeRetry(delay)
                    delay = min(delay * 2, Self.maxRetryDelay)
                    continue
                }
                failuresInOutage = failing ? failuresInOutage + 1 : 1
                if !failing {
                    failing = true
                    logger.error("capture database write failed; flows are being lost until it works again", metadata: [
                        "store": "\(backend.storeDescription)", "error": "\(CaptureErrorText.describe(error))",
                    ])
                }
                return nil
            }
        }
    }

    /// The first wait before a batch is tried again on an unreachable store; it doubles up to
    /// `maxRetryDelay`.
    nonisolated(unsafe) static var firstRetryDelay: TimeInterval = 0.5
    static let maxRetryDelay: TimeInterval = 30

    /// A write worked: says so once if writes had been failing or the store was unreachable.
    private func noteWorking() {
        if failing {
            logger.notice("capture database writes work again", metadata: [
                "store": "\(backend.storeDescription)", "failedBatches": "\(failuresInOutage)",
            ])
            failing = false
        }
        if unreachable {
            logger.notice("capture store reachable again: the flows kept meanwhile are being stored", metadata: [
                "store": "\(backend.storeDescription)",
            ])
            unreachable = false
        }
    }

    /// The store cannot be reached: says so once per outage.
    private func noteUnreachable(_ error: any Error) {
        guard !unreachable else { return }
        unreachable = true
        logger.warning("capture store unreachable: keeping flows in memory and trying again", metadata: [
            "store": "\(backend.storeDescription)", "error": "\(CaptureErrorText.describe(error))", "keepsAtMost": "\(maxQueuedFlows)",
        ])
    }

    /// Sleeps `seconds` on the writer thread, waking early when closing.
    private func waitBeforeRetry(_ seconds: TimeInterval) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !closing && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
    }

    private var isClosing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closing
    }

    /// The queue's drop counters now.
    private var currentDrops: (dropped: Int, stripped: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (queue.flowsDropped, queue.flowsStripped)
    }

    /// Says how many flows were never stored because the store stayed unreachable until close.
    private func logUnstoredAtClose() {
        guard unstoredAtClose > 0 else { return }
        logger.error("capture store unreachable at shutdown: flows kept in memory were not stored", metadata: [
            "store": "\(backend.storeDescription)", "flows": "\(unstoredAtClose)",
        ])
    }

    /// Logs once per overload episode that the queue started dropping flows or stripping
    /// bodies; an episode ends at the first batch with no new drops.
    private func logDrops(dropped: Int, stripped: Int) {
        if dropped > lastSeenDropped {
            if !droppingFlows {
                logger.warning("capture queue full: dropping flows", metadata: ["dropped": "\(dropped)"])
            }
            droppingFlows = true
        } else {
            droppingFlows = false
        }
        if stripped > lastSeenStripped {
            if !strippingBodies {
                logger.warning("capture queue over its body budget: storing flows without bodies",
                               metadata: ["stripped": "\(stripped)"])
            }
            strippingBodies = true
        } else {
            strippingBodies = false
        }
        lastSeenDropped = dropped
        lastSeenStripped = stripped
    }
}
