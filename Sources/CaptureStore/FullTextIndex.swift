import CSQLite
import FlowFilter
import Foundation
import GRDB
import ProxyModel

/// The capture's full-text index: an SQLite FTS5 table, `flows_fts`, one row per flow (its
/// rowid the flow's id) with the five fields of `FullTextDocument` as columns.
///
/// Why FTS5 and not `~b`: a regex over bodies decodes every body in Swift, minutes on millions
/// of flows; the index answers a word search from its inverted lists in milliseconds.
///
/// - Filled by the capture writer in the same transaction as the flow (`FlowInsertStatement`),
///   so a stored flow is always searchable; flows captured before schema v14 are indexed by
///   that migration, once.
/// - Emptied with its flows (`TrafficRepository.deleteFlows`, `deleteAllFlows`). FTS5 removes a
///   row only given the text it indexed, and SQLite 3.40 (Debian's) has no `contentless_delete`,
///   so that text is kept, compressed, in `flows_fts_text` (`FullTextStoredDocument`) and the
///   index reads it through the view `flows_fts_source` (an external-content table). FTS5's own
///   copy was more than half of a capture's size.
/// - Tokenized as `FullTextTokenizer` does in Swift: `unicode61`, diacritics removed.
///   `columnsize=0`: nothing here ranks by length, and it saves a row per flow. `automerge=16`
///   (FTS5's default is 4): each batch the writer commits adds a segment, and merging them four
///   at a time cost the writer a quarter more time per flow (200,000 bench flows: 18.4 → 14.7 s).
enum FullTextIndex {
    static let table = "flows_fts"
    static let textTable = "flows_fts_text"
    static let source = "flows_fts_source"

    private static let columns = FullTextField.allCases.map(\.column)

    /// The index over the kept text; run after `createTextSQL`.
    static let createSQL = """
        CREATE VIRTUAL TABLE \(table) USING fts5(
          \(columns.joined(separator: ", ")),
          content = '\(source)', content_rowid = 'id',
          tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
        INSERT INTO \(table) (\(table), rank) VALUES ('automerge', 16);
        """

    /// The kept text, and the view the index reads it through.
    static let createTextSQL = """
        CREATE TABLE \(textTable) (id INTEGER PRIMARY KEY, document BLOB NOT NULL);
        CREATE VIEW \(source) AS SELECT id,
          \(columns.enumerated().map { "proxyapp_fts_field(document, \($0)) AS \($1)" }.joined(separator: ",\n  "))
        FROM \(textTable);
        """

    static let insertTextSQL = "INSERT INTO \(textTable) (id, document) VALUES (?, ?)"
    static let insertSQL = "INSERT INTO \(table) (rowid, \(columns.joined(separator: ", "))) VALUES (?, ?, ?, ?, ?, ?)"

    /// Removes the index rows and kept text of the flows `condition` selects (before the flows go).
    static func delete(where condition: String, _ arguments: StatementArguments, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table) WHERE rowid IN (SELECT id FROM flows WHERE \(condition))",
                       arguments: arguments)
        try db.execute(sql: "DELETE FROM \(textTable) WHERE id IN (SELECT id FROM flows WHERE \(condition))",
                       arguments: arguments)
    }

    /// Empties the index (dropped and made again: FTS5 would delete its rows one by one).
    static func deleteAll(_ db: Database) throws {
        try db.execute(sql: "DROP TABLE \(table)")
        try db.execute(sql: "DELETE FROM \(textTable)")
        try db.execute(sql: createSQL)
    }

    /// The FTS5 query for a search on one side of the exchange.
    static func matchText(_ query: FullTextQuery, side: FilterMessageSide) -> String {
        side == .either ? query.ftsQuery : FullTextQuery.fields(FullTextField.side(side), query).ftsQuery
    }

    /// Whether the flow `id` satisfies the search: the answer `FilterExpression.matches(_:fullText:)`
    /// asks for when a row is checked again in Swift. An index error reads as no match.
    static func contains(_ id: Int64, _ query: FullTextQuery, side: FilterMessageSide, _ db: Database) -> Bool {
        (try? Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(table) MATCH ? AND rowid = ?)",
            arguments: [matchText(query, side: side), id])) ?? false
    }

    /// Indexes every flow already stored (migration v14): a one-time pass over older captures.
    static func indexExistingFlows(_ db: Database) throws {
        guard let connection = db.sqliteConnection, let file = sqlite3_db_filename(connection, "main") else { return }
        let bodyFiles = BodyFileStore(databasePath: String(cString: file))
        let statement = try FullTextInsertStatement(connection: connection)
        defer { statement.finalize() }
        let cursor = try FlowRecord.fetchCursor(db, sql: "SELECT * FROM flows ORDER BY id")
        while let record = try cursor.next() {
            guard let id = record.flow.id else { continue }
            try statement.insert(FullTextDocument(bodyFiles.flow(from: record)), id: id)
        }
    }
}

/// The index's row inserts (the kept text, then the index row), bound through SQLite's C API
/// beside `FlowInsertStatement`'s: prepared once per batch, with one compression context.
struct FullTextInsertStatement {
    private let text: OpaquePointer
    private let index: OpaquePointer
    private let connection: OpaquePointer
    private let encoder = FullTextDocumentEncoder()

    init(connection: OpaquePointer) throws {
        self.connection = connection
        text = try Self.prepare(FullTextIndex.insertTextSQL, connection)
        do {
            index = try Self.prepare(FullTextIndex.insertSQL, connection)
        } catch {
            sqlite3_finalize(text)
            throw error
        }
    }

    private static func prepare(_ sql: String, _ connection: OpaquePointer) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                                sql: sql)
        }
        return statement
    }

    func finalize() {
        sqlite3_finalize(text)
        sqlite3_finalize(index)
    }

    func insert(_ document: FullTextDocument, id: Int64) throws {
        let stored = encoder.encode(document)
        sqlite3_bind_int64(text, 1, id)
        stored.withUnsafeBytes { _ = sqlite3_bind_blob(text, 2, $0.baseAddress, Int32($0.count), Self.transient) }
        try step(text)
        sqlite3_bind_int64(index, 1, id)
        for (position, field) in FullTextField.allCases.enumerated() {
            var value = document[field]
            let column = Int32(position + 2)
            value.withUTF8 { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    sqlite3_bind_text(index, column, "", 0, Self.transient)
                    return
                }
                base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    _ = sqlite3_bind_text(index, column, $0, Int32(bytes.count), Self.transient)
                }
            }
        }
        try step(index)
    }

    private func step(_ statement: OpaquePointer) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
        }
    }

    /// SQLITE_TRANSIENT (a C macro Swift cannot import): SQLite copies the bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
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
