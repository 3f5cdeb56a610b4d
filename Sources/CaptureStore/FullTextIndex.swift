import CSQLite
import FlowFilter
import Foundation
import GRDB
import ProxyModel

/// The capture's full-text index: contentless SQLite FTS5 tables, one per "shard" of
/// `shardSize` consecutive flow ids (`flows_fts_<n>`, listed in `flows_fts_shards`), each row a
/// flow's five `FullTextDocument` fields under the flow's id.
///
/// Why FTS5 and not `~b`: a regex over bodies decodes every body in Swift, minutes on millions
/// of flows; the index answers a word search from its inverted lists in milliseconds.
///
/// Why contentless shards: FTS5 can remove a row only given the exact text it indexed, and
/// contentless tables cannot remove rows at all before SQLite 3.43 (Debian ships 3.40). Keeping
/// the text (FTS5's default, or compressed beside it) cost more than half of a capture's size and
/// made every removed flow cost as much as an added one (retention at its limit: requests/s
/// 0.75 of keep-all). So rows are never removed: a removed flow's row stays until its whole
/// shard goes, and every search is joined to `flows`, where the flow is gone, so it never
/// matches (flow ids are never reused: `AUTOINCREMENT`). A shard none of whose flows remain is
/// dropped; one with at most `retireBelow` left (marked flows retention keeps) has them indexed
/// again in the next shard and is dropped. The stale rows are bounded by the flows removed
/// from shards still standing.
///
/// - Filled by the capture writer in the same transaction as the flow (`FlowInsertStatement`),
///   so a stored flow is always searchable; flows captured before schema v14 are indexed by
///   that migration, once.
/// - Tokenized as `FullTextTokenizer` does in Swift: `unicode61`, diacritics removed.
///   `columnsize=0`: nothing here ranks by length. `automerge=16` (FTS5's default is 4): each
///   batch the writer commits adds a segment, and merging them four at a time cost the writer
///   a quarter more time per flow.
/// - Excerpts (`proxyapp search`) are cut in Swift from the flow itself: the tables hold no text.
enum FullTextIndex {
    static let shardsTable = "flows_fts_shards"
    /// Flows per shard: few shards to search on a capture of millions, and a shard's stale rows
    /// stay a small part of the index.
    /// (A variable only so that tests can make small shards.)
    nonisolated(unsafe) static var shardSize: Int64 = 100_000
    /// A shard with this few flows left (2 % of a shard: 2,000) is retired, its flows indexed
    /// again in the next shard.
    static var retireBelow: Int { Int(max(1, shardSize / 50)) }

    private static let columns = FullTextField.allCases.map(\.column)

    static func table(_ shard: Int64) -> String { "flows_fts_\(shard)" }

    static let createShardsSQL = "CREATE TABLE \(shardsTable) (shard INTEGER PRIMARY KEY, first_id INTEGER NOT NULL)"

    static func createSQL(_ shard: Int64) -> String {
        """
        CREATE VIRTUAL TABLE \(table(shard)) USING fts5(\(columns.joined(separator: ", ")), content = '',
          tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
        INSERT INTO \(table(shard)) (\(table(shard)), rank) VALUES ('automerge', 16);
        """
    }

    static func insertSQL(_ shard: Int64) -> String {
        "INSERT INTO \(table(shard)) (rowid, \(columns.joined(separator: ", "))) VALUES (?, ?, ?, ?, ?, ?)"
    }

    /// One shard: its number and the first flow id it holds (it holds ids up to the next
    /// shard's first, or beyond for the newest).
    struct Shard: Equatable, Sendable {
        var number: Int64
        var firstID: Int64
        var table: String { FullTextIndex.table(number) }
    }

    /// Every shard, oldest first.
    static func shards(_ db: Database) throws -> [Shard] {
        try Row.fetchAll(db, sql: "SELECT shard, first_id FROM \(shardsTable) ORDER BY shard").map {
            Shard(number: $0[0], firstID: $0[1])
        }
    }

    /// The FTS5 query for a search on one side of the exchange.
    static func matchText(_ query: FullTextQuery, side: FilterMessageSide) -> String {
        side == .either ? query.ftsQuery : FullTextQuery.fields(FullTextField.side(side), query).ftsQuery
    }

    /// Whether the flow `id` satisfies the search: the answer `FilterExpression.matches(_:fullText:)`
    /// asks for when a row is checked again in Swift. An index error reads as no match.
    static func contains(_ id: Int64, _ query: FullTextQuery, side: FilterMessageSide, _ db: Database) -> Bool {
        guard let shards = try? shards(db), !shards.isEmpty else { return false }
        let lookups = shards.map { "SELECT 1 FROM \($0.table) WHERE \($0.table) MATCH ?1 AND rowid = ?2" }
        return (try? Bool.fetchOne(db, sql: "SELECT EXISTS (\(lookups.joined(separator: " UNION ALL ")))",
                                   arguments: [matchText(query, side: side), id])) ?? false
    }

    /// Drops the shards whose flows are all gone, and retires those with at most `retireBelow`
    /// left (never the newest): their flows are indexed again in the next shard, which then
    /// starts where the retired one did, so each shard still holds exactly the flows of its id
    /// range. Called after flows are removed, in the same transaction.
    ///
    /// With `holdingIDsUpTo`, only the shards starting at or below that id are looked at: the
    /// removed flows were there, and a shard's count changes only when its flows are removed.
    /// Without it, every shard (a shard emptied while it was the newest is retired then).
    static func dropEmptiedShards(_ db: Database, bodyFiles: BodyFileStore, holdingIDsUpTo highestID: Int64? = nil) throws {
        var all = try shards(db)
        var index = 0
        while index + 1 < all.count {
            let shard = all[index], next = all[index + 1]
            if let highestID, shard.firstID > highestID { break }
            let left = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM (SELECT 1 FROM flows WHERE id >= ? AND id < ? LIMIT ?)",
                arguments: [shard.firstID, next.firstID, retireBelow + 1]) ?? 0
            guard left <= retireBelow else {
                index += 1
                continue
            }
            if left > 0 {
                let statement = try FullTextInsertStatement(db)
                defer { statement.finalize() }
                let cursor = try FlowRecord.fetchCursor(db, sql: "SELECT * FROM flows WHERE id >= ? AND id < ?",
                                                        arguments: [shard.firstID, next.firstID])
                while let record = try cursor.next() {
                    guard let id = record.flow.id else { continue }
                    try statement.insert(FullTextDocument(bodyFiles.flow(from: record)), id: id, into: next)
                }
            }
            try db.execute(sql: "DROP TABLE \(shard.table)")
            try db.execute(sql: "DELETE FROM \(shardsTable) WHERE shard = ?", arguments: [shard.number])
            try db.execute(sql: "UPDATE \(shardsTable) SET first_id = ? WHERE shard = ?",
                           arguments: [shard.firstID, next.number])
            all.remove(at: index)
            all[index].firstID = shard.firstID
        }
    }

    /// Empties the index: every shard dropped (the next flow starts a new one).
    static func deleteAll(_ db: Database) throws {
        for shard in try shards(db) {
            try db.execute(sql: "DROP TABLE \(shard.table)")
        }
        try db.execute(sql: "DELETE FROM \(shardsTable)")
    }

    /// Indexes every flow already stored (migration v14): a one-time pass over older captures.
    static func indexExistingFlows(_ db: Database) throws {
        guard let connection = db.sqliteConnection, let file = sqlite3_db_filename(connection, "main") else { return }
        let bodyFiles = BodyFileStore(databasePath: String(cString: file))
        let statement = try FullTextInsertStatement(db)
        defer { statement.finalize() }
        let cursor = try FlowRecord.fetchCursor(db, sql: "SELECT * FROM flows ORDER BY id")
        while let record = try cursor.next() {
            guard let id = record.flow.id else { continue }
            try statement.insert(FullTextDocument(bodyFiles.flow(from: record)), id: id)
        }
    }
}

/// The index's row insert into the newest shard, bound through SQLite's C API beside
/// `FlowInsertStatement`'s (prepared once per batch); starts a new shard when a flow's id is
/// `FullTextIndex.shardSize` past the newest one's first.
final class FullTextInsertStatement {
    private let db: Database
    private let connection: OpaquePointer
    private var shard: FullTextIndex.Shard?
    private var handle: OpaquePointer?
    /// The row's five fields, bound without a copy while the insert runs.
    private let texts = SQLiteTextArena()

    init(_ db: Database) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE) }
        self.db = db
        self.connection = connection
        shard = try FullTextIndex.shards(db).last
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    /// Indexes `document` as flow `id`, in `target` when given (a retiring shard's flows go to
    /// the newest), else in the newest shard, started anew when due.
    func insert(_ document: FullTextDocument, id: Int64, into target: FullTextIndex.Shard? = nil) throws {
        if let target {
            if target != shard || handle == nil { try use(target) }
        } else if shard == nil || id >= shard!.firstID + FullTextIndex.shardSize {
            let next = FullTextIndex.Shard(number: (shard?.number ?? 0) + 1, firstID: id)
            try db.execute(sql: FullTextIndex.createSQL(next.number))
            try db.execute(sql: "INSERT INTO \(FullTextIndex.shardsTable) (shard, first_id) VALUES (?, ?)",
                           arguments: [next.number, next.firstID])
            try use(next)
        } else if handle == nil, let shard {
            try use(shard)
        }
        guard let handle else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "no full-text shard to insert into") }
        sqlite3_bind_int64(handle, 1, id)
        texts.reset()
        for (position, field) in FullTextField.allCases.enumerated() {
            texts.add(document[field], at: Int32(position + 2), of: handle)
        }
        let code = texts.run(binding: handle) {
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            return code
        }
        guard code == SQLITE_DONE else { throw SQLiteBinding.error(code, connection) }
    }

    private func use(_ next: FullTextIndex.Shard) throws {
        finalize()
        handle = try SQLiteBinding.prepare(FullTextIndex.insertSQL(next.number), on: connection)
        shard = next
    }
}

extension TrafficDatabase {
    /// How many flows of the capture at `path` opening it read-write will index (a capture from
    /// before schema v14), so a caller can say why the first start takes a while; 0 for a new,
    /// current or unreadable file.
    public static func flowsAwaitingSearchIndex(path: String) -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        var configuration = Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return 0 }
        defer { try? queue.close() }
        return (try? queue.read { db -> Int in
            guard try db.tableExists("grdb_migrations"), try db.tableExists("flows"),
                  try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                                    arguments: ["v14-full-text"]) == false
            else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM flows") ?? 0
        }) ?? 0
    }
}
