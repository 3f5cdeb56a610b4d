import Foundation
import Logging
import ProxyModel

/// Where `CaptureWriter` commits its batches: the local SQLite capture (`SQLiteCaptureBackend`)
/// or a capture shared by several proxies (SharedCapture's PostgreSQL backend).
///
/// It exists so that the queue, the batching, the drop policy and the once-per-outage logging
/// are written once, whatever the store. Every method runs on the writer thread only, one at a
/// time; all of them may block on I/O.
public protocol CaptureBackend: AnyObject, Sendable {
    /// Names the store in log lines: a path, or a URL without its password.
    var storeDescription: String { get }

    /// Commits `items` in one transaction, in order, and returns the new ids of the flows among
    /// them. An open flow's row id is remembered in `openRows` under its key; messages and ends
    /// of flows not in `openRows` (dropped earlier) are skipped. Either all is stored or, on
    /// error, nothing is.
    func write(_ items: [CaptureItem], openRows: inout [OpenFlowKey: Int64]) throws -> [Int64]

    /// Whether `error` means the store cannot be reached for now (a server down, a network
    /// gone): the writer then keeps the batch, tries again with back-off and keeps queueing
    /// within its bounds, instead of losing the batch as it does for any other error.
    func isUnreachable(_ error: any Error) -> Bool

    /// Removes up to `batchSize` × `maxBatches` flows `policy` does not keep, never those in
    /// `protected` (open flows).
    func enforce(_ policy: RetentionPolicy, batchSize: Int, maxBatches: Int, protected: Set<Int64>) throws -> PruneOutcome

    /// Called after roughly `bytes` more were committed (SQLite checkpoints its log here).
    func didCommit(bytes: Int, logger: Logger)

    /// Called once the writer has stayed idle for a second after a burst: give memory back.
    func releaseMemory()

    /// Called once, after the last batch: leave the store tidy (SQLite folds its log in).
    func close(logger: Logger)
}

extension CaptureBackend {
    public func isUnreachable(_ error: any Error) -> Bool { false }
    public func didCommit(bytes: Int, logger: Logger) {}
    public func releaseMemory() {}
    public func close(logger: Logger) {}
}
