import Foundation
import GRDB
import ProxyModel

/// Every read and write of captured flows: the one place that holds SQL.
///
/// The engine never calls it directly (it goes through `CaptureWriter`); the CLI and the TUI
/// read through it, usually on a database opened with `TrafficDatabase.openReadOnly`.
/// All methods are synchronous and may block on I/O: never call them on an event loop.
public struct TrafficRepository: Sendable {
    public let database: TrafficDatabase

    public init(database: TrafficDatabase) {
        self.database = database
    }

    // MARK: - Writes

    /// Inserts `flows` (and the WebSocket messages a flow carries) in one transaction and
    /// returns their new ids, in order.
    /// Ids already set on the flows are ignored: the database assigns new ones.
    /// Either every flow is stored or, on error, none is.
    @discardableResult
    public func insert(_ flows: [Flow]) throws -> [Int64] {
        if flows.isEmpty { return [] }
        return try database.pool.write { db in
            let statement = try FlowInsertStatement(db, sql: Self.flowInsertSQL,
                                                    bodyFiles: database.bodyFiles)
            defer { statement.finalize() }
            var ids: [Int64] = []
            ids.reserveCapacity(flows.count)
            for flow in flows {
                let id = try statement.insert(flow)
                ids.append(id)
                // An imported WebSocket flow brings its messages (live ones come later: `write`).
                if let messages = flow.webSocketMessages, !messages.isEmpty {
                    try Self.insertMessages(messages, flowID: id, db)
                }
            }
            return ids
        }
    }

    /// One positional INSERT of every column but `id`, prepared once per batch.
    static let flowInsertSQL: String = {
        let columns = FlowRecord.insertColumns.map(\.name)
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO flows (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }()

    /// Copies what the write-ahead log holds into the database file without waiting for
    /// readers (a passive checkpoint). The capture writer calls it between batches; automatic
    /// checkpoints are off (see `TrafficDatabase`).
    public func checkpoint() throws {
        try database.pool.writeWithoutTransaction { db in
            _ = try db.checkpoint(.passive)
        }
    }

    /// Gives back what SQLite caches for each connection (pages of the capture, about 2 MiB
    /// per connection after a burst): the capture writer calls it once idle; the next write
    /// reads the pages it needs from the file system's cache.
    public func releaseMemory() {
        database.pool.releaseMemory()
    }

    /// Copies the whole write-ahead log into the database file and empties it (a TRUNCATE
    /// checkpoint), so a capture left by a stopped proxy is one self-contained file. Waits at
    /// most `busyTimeout` seconds for readers in other processes (the TUI) to let go; throws
    /// SQLite's busy error when they did not (the log is then folded in by the next opener).
    public func checkpointTruncating(busyTimeout: TimeInterval = 0.5) throws {
        try database.pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA busy_timeout = \(Int(busyTimeout * 1000))")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Int(TrafficDatabase.busyTimeout * 1000))") }
            try db.checkpoint(.truncate)
        }
    }

    /// Sets or clears the `marked` flag of a flow. Returns false when no flow has that id.
    @discardableResult
    public func setMarked(_ marked: Bool, id: Int64) throws -> Bool {
        try database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET marked = ? WHERE id = ?", arguments: [marked, id])
            return db.changesCount > 0
        }
    }

    // MARK: - Reads

    /// The `limit` most recently stored flows, newest (highest id) first.
    public func latestFlows(limit: Int) throws -> [Flow] {
        guard limit > 0 else { return [] }
        return try database.pool.read { db in
            try FlowRecord
                .order(FlowRecord.Columns.id.desc)
                .limit(limit)
                .fetchAll(db)
                .map(database.bodyFiles.flow(from:))
        }
    }

    /// Up to `limit` flows stored after the flow `id`, oldest first: what a reader that follows
    /// the capture (`proxyapp flows --follow`, the TUI) fetches on each poll.
    public func flows(after id: Int64, limit: Int) throws -> [Flow] {
        guard limit > 0 else { return [] }
        return try database.pool.read { db in
            try FlowRecord
                .filter(FlowRecord.Columns.id > id)
                .order(FlowRecord.Columns.id)
                .limit(limit)
                .fetchAll(db)
                .map(database.bodyFiles.flow(from:))
        }
    }

    /// The flow with this id, or nil when there is none.
    public func flow(id: Int64) throws -> Flow? {
        try database.pool.read { db in
            try FlowRecord.fetchOne(db, key: id).map(database.bodyFiles.flow(from:))
        }
    }

    /// How many flows are stored.
    public func count() throws -> Int {
        try database.pool.read { db in
            try FlowRecord.fetchCount(db)
        }
    }

    /// The writer connection's journal mode and `synchronous` level (1 = NORMAL), for tests.
    func writerConnectionSettings() throws -> (journalMode: String, synchronous: Int) {
        try database.pool.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
             try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1)
        }
    }

    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound file, otherwise the problems found.
    public func integrityCheck() throws -> [String] {
        try database.pool.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check")
        }
    }
}
