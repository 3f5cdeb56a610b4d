import Foundation
import GRDB
import ProxyModel

extension TrafficRepository {
    /// How many flows `insertAll` writes per transaction: small enough that a proxy capturing
    /// into the same file waits well under `TrafficDatabase.busyTimeout` for the write lock.
    public static let importChunkSize = 2_000

    /// What one import transaction may hold in bodies: a chunk of 2,000 large flows would be
    /// gigabytes in memory.
    public static let importChunkBodyBytes = 64 << 20

    /// Inserts many flows (an import) in several short transactions, returning their new ids in
    /// order. All or nothing for the caller: when a later chunk fails, the flows this call had
    /// already inserted are deleted again before the error is rethrown (see `FlowImport`).
    @discardableResult
    public func insertAll(_ flows: [Flow], chunkSize: Int = importChunkSize) throws -> [Int64] {
        let flowImport = FlowImport(chunkSize: chunkSize) { self }
        do {
            for flow in flows { try flowImport.add(flow) }
            return try flowImport.finish()
        } catch {
            flowImport.rollBack()
            throw error
        }
    }

    /// Deletes the flows with these ids (ids not stored are ignored), their WebSocket messages
    /// and the body files no other flow names, in one transaction.
    public func delete(ids: [Int64]) throws {
        if ids.isEmpty { return }
        try database.pool.write { db in
            var deletion = FlowDeletion()
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
                let placeholders = Array(repeating: "?", count: part.count).joined(separator: ",")
                try deleteFlows(where: "id IN (\(placeholders))", StatementArguments(part), into: &deletion, db)
            }
            try removeUnnamedBodyFiles(deletion.bodyFiles, db)
            // Every shard is looked at (not only those the ids fall in): a rare, asked-for pass
            // that also retires a shard emptied while it was the newest.
            try FullTextIndex.dropEmptiedShards(db, bodyFiles: database.bodyFiles)
        }
    }

    /// Deletes the flows matching `condition` and their WebSocket messages (their full-text rows
    /// stay until their shard goes: `FullTextIndex`), adding to `deletion` how many went, the
    /// highest id among them and the body files they named (for `removeUnnamedBodyFiles` once
    /// the transaction's deletes are done).
    ///
    /// One statement: the delete returns what it removed (`RETURNING`) instead of four reads of
    /// the body-file columns and one of the ids before it. Messages are looked up by flow id
    /// only when the capture holds any.
    func deleteFlows(where condition: String, _ arguments: StatementArguments, into deletion: inout FlowDeletion,
                     _ db: Database) throws {
        let fileColumns = FlowRecord.Columns.bodyFiles.map(\.name).joined(separator: ", ")
        let rows = try Row.fetchAll(db, sql: "DELETE FROM flows WHERE \(condition) RETURNING id, \(fileColumns)",
                                    arguments: arguments)
        guard !rows.isEmpty else { return }
        for row in rows {
            let id: Int64 = row[0]
            deletion.highestID = max(deletion.highestID ?? id, id)
            for column in 1...FlowRecord.Columns.bodyFiles.count {
                if let file: String = row[column] { deletion.bodyFiles.insert(file) }
            }
        }
        deletion.count += rows.count
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM messages)") ?? false else { return }
        let messages = try db.cachedStatement(sql: "DELETE FROM messages WHERE flow_id = ?")
        for row in rows { try messages.execute(arguments: [row[0] as Int64]) }
    }

    /// Removes those of `files` no flow names any more. Inside the deleting transaction: no
    /// other writer can name one of them again until it commits.
    func removeUnnamedBodyFiles(_ files: Set<String>, _ db: Database) throws {
        for file in files {
            let named = try FlowRecord.Columns.bodyFiles.contains { column in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM flows WHERE \(column.name) = ?)",
                                  arguments: [file]) ?? false
            }
            if !named { database.bodyFiles.remove(file) }
        }
    }
}

/// An import in progress: flows arrive one at a time (a HAR being read as a stream) and are
/// stored in chunks of `chunkSize` flows or `chunkBodyBytes` of bodies, each chunk one short
/// transaction, so a proxy capturing into the same file waits well under
/// `TrafficDatabase.busyTimeout` for the write lock, and memory holds one chunk.
///
/// All or nothing for the caller: after a failure (of a chunk, or of the input after some chunks
/// were stored), `rollBack` deletes every flow this import inserted, so the store holds what it
/// held before; flows other writers stored meanwhile are never touched. One long transaction
/// would be simpler, but a running proxy's capture writer gives up on a batch after waiting
/// `busyTimeout` for the lock and would lose live flows. A killed import keeps its chunks.
///
/// The repository is opened on the first chunk (`open`), so an input that fails before its
/// first flow creates no capture file.
public final class FlowImport {
    private let chunkSize: Int
    private let chunkBodyBytes: Int
    private let open: () throws -> TrafficRepository
    private var repository: TrafficRepository?
    private var pending: [Flow] = []
    private var pendingBodyBytes = 0
    /// The ids this import inserted, in order.
    public private(set) var ids: [Int64] = []

    public init(chunkSize: Int = TrafficRepository.importChunkSize,
                chunkBodyBytes: Int = TrafficRepository.importChunkBodyBytes,
                open: @escaping () throws -> TrafficRepository) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.chunkSize = chunkSize
        self.chunkBodyBytes = chunkBodyBytes
        self.open = open
    }

    /// Queues `flow`; stores the chunk when it is full.
    public func add(_ flow: Flow) throws {
        pending.append(flow)
        pendingBodyBytes += flow.capturedBodyBytes + (flow.webSocketMessages?.reduce(0) { $0 + $1.payload.count } ?? 0)
        if pending.count >= chunkSize || pendingBodyBytes >= chunkBodyBytes { try store() }
    }

    /// Stores what is queued; returns the ids of every flow of the import, in order.
    public func finish() throws -> [Int64] {
        try store()
        return ids
    }

    /// Deletes what this import stored (best effort: the error that led here matters more).
    public func rollBack() {
        pending = []
        pendingBodyBytes = 0
        guard let repository else { return }
        try? repository.delete(ids: ids)
        ids = []
    }

    private func store() throws {
        guard !pending.isEmpty else { return }
        let repository = try self.repository ?? open()
        self.repository = repository
        ids += try repository.insert(pending)
        pending.removeAll(keepingCapacity: true)
        pendingBodyBytes = 0
    }
}
