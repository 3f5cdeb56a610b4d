import Foundation
import Logging
import ProxyModel

/// The capture writer's backend for the local SQLite capture: inserts through
/// `TrafficRepository`, checkpoints the write-ahead log as it grows and folds it in at close.
///
/// Checkpoints are the writer's job because automatic ones are off (`TrafficDatabase`): they
/// run between batches, after the batch that made one due has been let go.
public final class SQLiteCaptureBackend: CaptureBackend, @unchecked Sendable {
    public let repository: TrafficRepository
    /// Bytes committed to the log since the last checkpoint; writer thread only (hence the
    /// `@unchecked Sendable`: `CaptureBackend` methods run on that one thread).
    private var bytesSinceCheckpoint = 0
    /// A checkpoint is due once this much has gone into the write-ahead log (SQLite's own
    /// default is 1000 pages, about 4 MiB).
    static let checkpointBytes = 4 << 20

    public init(repository: TrafficRepository) {
        self.repository = repository
    }

    public var storeDescription: String { repository.database.path }

    public func write(_ items: [CaptureItem], openRows: inout [OpenFlowKey: Int64]) throws -> [Int64] {
        guard repository.database.fileIsInPlace else {
            throw CaptureStoreError.databaseFileGone(path: repository.database.path)
        }
        // Flows are inserted straight from the items: copying them into a `[Flow]` first retained
        // every field of every flow once more.
        return try repository.write(items, openRows: &openRows)
    }

    public func enforce(_ policy: RetentionPolicy, batchSize: Int, maxBatches: Int,
                        protected: Set<Int64>) throws -> PruneOutcome {
        try repository.enforce(policy, batchSize: batchSize, maxBatches: maxBatches, protected: protected)
    }

    /// Runs a passive checkpoint once enough has been written. A failing checkpoint is not a
    /// lost flow: the log just keeps growing until the next one succeeds.
    public func didCommit(bytes: Int, logger: Logger) {
        bytesSinceCheckpoint += bytes
        guard bytesSinceCheckpoint >= Self.checkpointBytes else { return }
        bytesSinceCheckpoint = 0
        do {
            try repository.checkpoint()
        } catch {
            logger.debug("capture database checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    public func releaseMemory() {
        repository.releaseMemory()
    }

    /// The whole log goes into the database file and the `-wal` file is emptied, so a stopped
    /// proxy leaves one self-contained capture. Failing (a reader in another process held on,
    /// the file is gone) loses nothing: the next opener folds it in.
    public func close(logger: Logger) {
        guard repository.database.fileIsInPlace else { return }
        do {
            try repository.checkpointTruncating()
        } catch {
            logger.notice("capture database: the write-ahead log was not folded into the file at close", metadata: [
                "path": "\(repository.database.path)", "error": "\(CaptureErrorText.describe(error))",
            ])
        }
    }
}
