import FlowFilter
import Foundation
import GRDB
import ProxyModel

/// Reads in bounded slices of the id space, for a viewer that must stay responsive over a capture
/// of millions of flows: it filters one slice at a time (newest first, so the tail a user sees
/// first is ready first) and can stop between slices when the user changes the filter.
extension TrafficRepository {
    /// The highest stored flow id, 0 when the capture is empty.
    public func lastFlowID() throws -> Int64 {
        try database.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM flows") ?? 0
        }
    }

    /// The ids in `ids` (a slice of the id space, both ends included) whose flows match `query`,
    /// ascending. Exact filters run in SQL alone; for the rest the SQL superset is re-checked in
    /// Swift, reading bodies (and parsing headers) only when the filter looks at them.
    public func matchingFlowIDs(in ids: ClosedRange<Int64>, query: FlowQuery) throws -> [Int64] {
        try database.pool.read { db in
            let condition = try Self.condition(query, ids: ids, db)
            let arguments = StatementArguments([ids.lowerBound, ids.upperBound]) + StatementArguments(condition.arguments)
            let range = "id BETWEEN ? AND ? AND (\(condition.sql))"
            guard !condition.isExact, let filter = query.filter else {
                return try Int64.fetchAll(db, sql: "SELECT id FROM flows WHERE \(range) ORDER BY id", arguments: arguments)
            }
            let columns = Self.columns(reading: filter)
            var matching: [Int64] = []
            let cursor = try FlowRecord.fetchCursor(
                db, sql: "SELECT \(columns) FROM flows WHERE \(range) ORDER BY id", arguments: arguments)
            while let record = try cursor.next() {
                if let id = record.flow.id,
                   Self.matches(filter, try Self.withMessages(database.bodyFiles.flow(from: record), for: filter, db), db) {
                    matching.append(id)
                }
            }
            return matching
        }
    }

    /// Those of `ids` whose flows match `query`, in the order given: a search over a view's own
    /// rows (which may be sparse in the id space), a few hundred ids per statement.
    public func matchingFlowIDs(among ids: [Int64], query: FlowQuery) throws -> [Int64] {
        let filter = FilterSQLCondition(query).isExact ? nil : query.filter
        let columns = filter.map(Self.columns(reading:)) ?? "id"
        var matching: Set<Int64> = []
        try database.pool.read { db in
            for start in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[start..<min(start + 500, ids.count)])
                // The part's span of ids: a full-text search then reads only that part of its index.
                guard let low = part.min(), let high = part.max() else { continue }
                let condition = try Self.condition(query, ids: low...high, db)
                let placeholders = Array(repeating: "?", count: part.count).joined(separator: ",")
                let sql = "SELECT \(columns) FROM flows WHERE id IN (\(placeholders)) AND (\(condition.sql))"
                let arguments = StatementArguments(part) + StatementArguments(condition.arguments)
                if let filter {
                    let cursor = try FlowRecord.fetchCursor(db, sql: sql, arguments: arguments)
                    while let record = try cursor.next() {
                        if let id = record.flow.id,
                           Self.matches(filter, try Self.withMessages(database.bodyFiles.flow(from: record), for: filter, db), db) {
                            matching.insert(id)
                        }
                    }
                } else {
                    matching.formUnion(try Int64.fetchAll(db, sql: sql, arguments: arguments))
                }
            }
        }
        return ids.filter(matching.contains)
    }

    /// Checks a stored flow against `filter` in Swift, its full-text searches answered by the
    /// index (the flow may have been read without its bodies).
    static func matches(_ filter: FlowFilter, _ flow: Flow, _ db: Database) -> Bool {
        guard filter.expression.searchesFullText, let id = flow.id else { return filter.matches(flow) }
        return filter.expression.matches(flow) { query, side in FullTextIndex.contains(id, query, side: side, db) }
    }

    /// `flow` with its WebSocket messages when `filter` reads bodies (`~b` matches them too).
    static func withMessages(_ flow: Flow, for filter: FlowFilter, _ db: Database) throws -> Flow {
        guard flow.messageCount > 0, filter.expression.readsBodies(besidesFullText: true), let id = flow.id else { return flow }
        var flow = flow
        flow.webSocketMessages = try Self.messages(flowID: id, db)
        return flow
    }

    /// The columns `filter` needs: bodies, headers, or neither (the others read as empty).
    private static func columns(reading filter: FlowFilter) -> String {
        filter.expression.readsBodies(besidesFullText: true) ? "*"
            : filter.expression.readsHeaders ? listingColumns : listingColumnsWithoutHeaders
    }

    /// Deletes every flow and message, and every body file (pins are kept); returns how many
    /// flows were deleted.
    @discardableResult
    public func deleteAllFlows() throws -> Int {
        try database.pool.write { db in
            try db.execute(sql: "DELETE FROM messages")
            try FullTextIndex.deleteAll(db)
            let deleted = try FlowRecord.deleteAll(db)
            // Inside the transaction: no other writer can name a file until it commits.
            database.bodyFiles.removeAll()
            return deleted
        }
    }
}
