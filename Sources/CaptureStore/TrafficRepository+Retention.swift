import Foundation
import GRDB

extension TrafficRepository {
    /// The capture's size as `RetentionPolicy.maxBytes` counts it: the database pages in use
    /// (free pages are given back by incremental vacuum, or reused) plus the body files. The
    /// write-ahead log is left out: a checkpoint empties it, and counting it would remove flows
    /// for bytes that are about to go anyway.
    public func captureSize() throws -> Int64 {
        let pages = try database.pool.read { db in
            (try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0, try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0,
             try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
        }
        return (pages.0 - pages.1) * pages.2 + database.bodyFiles.totalSize()
    }

    /// Removes the oldest flows `policy` does not keep: those older than `maxAge`, then the
    /// oldest beyond `maxFlows`, then the oldest while the capture is over `maxBytes`. Each batch
    /// of at most `batchSize` flows is one write transaction (with its messages and body files),
    /// so a proxy capturing meanwhile waits for one batch at most; at most `maxBatches` run.
    /// Marked flows stay when `keepMarked`; so do the rows in `protected` (WebSockets still open).
    public func enforce(_ policy: RetentionPolicy, now: Date = Date(), batchSize: Int = 2_000, maxBatches: Int = .max,
                        protected: Set<Int64> = []) throws -> PruneOutcome {
        var outcome = PruneOutcome()
        guard !policy.keepsEverything, batchSize > 0 else { return outcome }
        var kept = policy.keepMarked ? "marked = 0" : "1"
        if !protected.isEmpty {
            kept += " AND id NOT IN (\(protected.sorted().map(String.init).joined(separator: ",")))"
        }
        var batches = 0
        while let removal = try nextRemoval(policy, kept: kept, now: now, batchSize: batchSize, outcome: &outcome) {
            guard batches < maxBatches else {
                outcome.moreDue = true
                return outcome
            }
            let removed = try deleteFlows(where: removal.condition, removal.arguments)
            guard removed > 0 else { return outcome }
            try reclaimFreePages()
            outcome.flowsRemoved += removed
            batches += 1
        }
        return outcome
    }

    /// The next batch to remove under `policy`, as a condition on `flows`: oldest first; nil
    /// when the policy holds.
    /// When it holds, `outcome` gets the room left under `maxFlows` and `maxBytes`.
    private func nextRemoval(_ policy: RetentionPolicy, kept: String, now: Date, batchSize: Int,
                             outcome: inout PruneOutcome) throws -> (condition: String, arguments: StatementArguments)? {
        outcome.flowRoom = nil
        outcome.byteRoom = nil
        if let maxAge = policy.maxAge {
            let cutoff = FlowRecord.milliseconds(now.addingTimeInterval(-maxAge))
            let due = try database.pool.read { db in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM flows WHERE started_at < ? AND \(kept))",
                                  arguments: [cutoff]) ?? false
            }
            if due {
                return ("id IN (SELECT id FROM flows WHERE started_at < ? AND \(kept) ORDER BY started_at LIMIT ?)",
                        [cutoff, batchSize])
            }
        }
        var wanted = 0
        if let maxFlows = policy.maxFlows {  // marked flows kept do not count
            // Both counts read indexes only (the smallest one, and the partial one of marked rows).
            let counted = try database.pool.read { db in
                let all = try Int.fetchOne(db, sql: "SELECT count(*) FROM flows") ?? 0
                guard policy.keepMarked else { return all }
                return all - (try Int.fetchOne(db, sql: "SELECT count(*) FROM flows WHERE marked <> 0") ?? 0)
            }
            // Once over, a little more goes (up to half a batch, at most 5 % of the limit), so a
            // capture at its limit is trimmed in batches rather than a few flows per write.
            if counted > maxFlows { wanted = counted - maxFlows + min(batchSize / 2, maxFlows / 20) }
            outcome.flowRoom = counted <= maxFlows ? maxFlows - counted : nil
        }
        if wanted == 0, let maxBytes = policy.maxBytes {
            let size = try captureSize()
            if size > maxBytes { wanted = batchSize }
            outcome.byteRoom = size <= maxBytes ? maxBytes - size : nil
        }
        guard wanted > 0 else { return nil }
        // Rows are numbered in the order they were stored: the oldest are a range of ids.
        let last = try database.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM flows WHERE \(kept) ORDER BY id LIMIT 1 OFFSET ?",
                               arguments: [min(wanted, batchSize) - 1])
        }
        guard let last else { return nil }
        return ("id <= ? AND \(kept)", [last])
    }

    /// Deletes the flows matching `condition`, their messages and the body files no other flow
    /// names, in one transaction; returns how many flows went.
    ///
    /// Only the shards up to the highest id removed are looked at for retirement (retention
    /// removes the oldest flows: the shards holding them, and any older ones marked flows keep).
    /// Counting up to 2,001 rows left in every shard (one per 100,000 flows: about ten in a
    /// 2 GiB capture of 1 KiB responses) after each batch slowed the writer at the limit until
    /// flows queued (in one run each of the same loads, peak RSS 87.7 MiB before, 51.8 after).
    private func deleteFlows(where condition: String, _ arguments: StatementArguments) throws -> Int {
        try database.pool.write { db in
            var deletion = FlowDeletion()
            try deleteFlows(where: condition, arguments, into: &deletion, db)
            try removeUnnamedBodyFiles(deletion.bodyFiles, db)
            if let highestID = deletion.highestID {
                try FullTextIndex.dropEmptiedShards(db, bodyFiles: database.bodyFiles, holdingIDsUpTo: highestID)
            }
            return deletion.count
        }
    }

    /// Gives the database's free pages back to the file system once they are a quarter of it
    /// (and at least 8 MiB): new flows reuse free pages, so a capture kept at its limit while
    /// traffic flows never pays for moving pages, and one that shrank (an age limit passing over
    /// a busy hour, `proxyapp prune`) gets smaller. A capture created before retention existed
    /// has no incremental vacuum: its free pages are only reused.
    private func reclaimFreePages() throws {
        try database.pool.writeWithoutTransaction { db in
            let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4_096
            guard free * pageSize >= 8 << 20, free * 4 >= pages else { return }
            try db.execute(sql: "PRAGMA incremental_vacuum")
        }
    }
}

/// What one transaction's deletes removed: how many flows, the highest id among them (the
/// full-text shards to look at), and the body files they named.
struct FlowDeletion {
    var count = 0
    var highestID: Int64?
    var bodyFiles: Set<String> = []
}
