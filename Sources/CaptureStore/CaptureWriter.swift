import Foundation
import Logging
import ProxyModel

/// The `FlowSink` the engine hands finished flows to: a bounded queue drained by one writer
/// thread that commits in batches to a `CaptureBackend` (SQLite, or a shared PostgreSQL).
///
/// It exists so that proxying never waits on the database. `record` runs on event loops and
/// only takes a short lock to queue the flow (or strip/drop it under the `CaptureQueue`
/// policy when the writer falls behind). The writer thread commits a batch when it holds
/// `maxBatchSize` flows or when its oldest flow has waited `maxBatchDelay`. A database error
/// (disk full, file deleted, locked) loses that batch, is counted and logged once per outage,
/// and the writer goes on with the next one; a store that cannot be reached (a database server
/// down) keeps its batch and the queue instead, within their bounds, until it is back.
public final class CaptureWriter: FlowSink {
    /// Bounds on what the writer holds in memory and how it batches.
    public struct Limits: Sendable {
        /// Flows queued at most; past it new flows are dropped whole. A queued HTTPS flow with a
        /// 1 KiB body holds about 2.8 KiB, so a full queue of such flows is ~140 MiB: the depth a
        /// writer held up for three seconds at 15,000 requests/s needs without losing a flow.
        public var maxQueuedFlows: Int = 50_000
        /// Captured body bytes queued at most; past it new flows are queued without bodies.
        public var maxQueuedBodyBytes: Int = 64 << 20
        /// Flows per transaction at most.
        public var maxBatchSize: Int = 512
        /// How long a queued flow waits at most for its batch to fill.
        public var maxBatchDelay: Duration = .milliseconds(100)
        /// How often the writer looks at its retention limits while flows keep coming.
        public var retentionInterval: Duration = .seconds(5)

        public init(maxQueuedFlows: Int = 50_000, maxQueuedBodyBytes: Int = 64 << 20,
                    maxBatchSize: Int = 512, maxBatchDelay: Duration = .milliseconds(100),
                    retentionInterval: Duration = .seconds(5)) {
            self.maxQueuedFlows = maxQueuedFlows
            self.maxQueuedBodyBytes = maxQueuedBodyBytes
            self.maxBatchSize = maxBatchSize
            self.maxBatchDelay = maxBatchDelay
            self.retentionInterval = retentionInterval
        }
    }

    public let limits: Limits
    private let state: CaptureWriterState

    /// Starts the writer thread.
    ///
    /// - Parameter onCommitted: called on the writer thread after each committed batch, with the
    ///   flows carrying their new ids, in order. It delays the next batch while it runs: keep it
    ///   short, and never call `flush` or `close` from it.
    /// - Parameter onIdle: called on the writer thread once the queue has stayed empty for a
    ///   second after a batch was written (the end of a burst of traffic), at most once per
    ///   burst: the run gives memory back to the system there (`MemoryTuning.trim`), and later
    ///   its unused code pages.
    /// - Parameter onBacklogWorkedOff: called on the writer thread once a backlog of 4,096 items
    ///   or more (`CaptureWriterState.backlogTrimDepth`) is worked off while traffic goes on: the
    ///   memory the queued flows held can go back to the system too, but the proxy is not idle.
    /// - Parameter retention: what the capture keeps; the writer removes older flows between
    ///   batches, up to 2,000 at a time, and whenever it has nothing to write.
    public convenience init(repository: TrafficRepository, limits: Limits = Limits(), logger: Logger,
                            retention: RetentionPolicy = RetentionPolicy(),
                            onCommitted: (@Sendable ([Flow]) -> Void)? = nil, onIdle: (@Sendable () -> Void)? = nil,
                            onBacklogWorkedOff: (@Sendable () -> Void)? = nil) {
        self.init(backend: SQLiteCaptureBackend(repository: repository), limits: limits, logger: logger,
                  retention: retention, onCommitted: onCommitted, onIdle: onIdle, onBacklogWorkedOff: onBacklogWorkedOff)
    }

    /// Starts the writer thread over any store (`CaptureBackend`); the same as above otherwise.
    public init(backend: any CaptureBackend, limits: Limits = Limits(), logger: Logger,
                retention: RetentionPolicy = RetentionPolicy(),
                onCommitted: (@Sendable ([Flow]) -> Void)? = nil, onIdle: (@Sendable () -> Void)? = nil,
                onBacklogWorkedOff: (@Sendable () -> Void)? = nil) {
        precondition(limits.maxQueuedFlows > 0, "maxQueuedFlows must be positive")
        precondition(limits.maxBatchSize > 0, "maxBatchSize must be positive")
        self.limits = limits
        state = CaptureWriterState(backend: backend, limits: limits, logger: logger, retention: retention,
                                   onCommitted: onCommitted, onIdle: onIdle, onBacklogWorkedOff: onBacklogWorkedOff)
        let thread = Thread { [state] in
            CaptureThreadName.apply()
            state.run()
        }
        state.start(thread)
    }

    deinit {
        // Let the thread drain what is queued and exit, without waiting for it here.
        state.requestClose()
    }

    /// Queues a finished flow for writing. Never touches the database and never waits for it:
    /// at worst it strips the flow's bodies or drops the flow, and counts that.
    public func record(_ flow: consuming Flow) {
        state.record(flow)
    }

    /// Queues an open flow (a WebSocket after its `101`); its messages and end follow under the
    /// key returned, in the same queue, so they are written after it.
    public func recordOpen(_ flow: Flow) -> OpenFlowKey? {
        state.recordOpen(flow)
    }

    /// Queues messages of an open flow (bounded like bodies: payloads go first).
    public func append(_ messages: [CapturedMessage], to key: OpenFlowKey) {
        state.append(messages, to: key)
    }

    /// Queues the end of an open flow: its byte counts and end time.
    public func finish(_ key: OpenFlowKey, with end: OpenFlowEnd) {
        state.finish(key, with: end)
    }

    /// Blocks the caller until every flow recorded before the call is committed (or counted as
    /// failed). For tests and shutdown; never call it on an event loop or from `onCommitted`.
    public func flush() {
        state.flush()
    }

    /// Flushes, then stops the writer thread. Flows recorded afterwards are counted as dropped.
    /// Calling it again does nothing.
    public func close() {
        state.close()
    }

    /// What the writer did so far; cheap, from any thread.
    public var statistics: CaptureStatistics {
        state.statistics
    }
}
