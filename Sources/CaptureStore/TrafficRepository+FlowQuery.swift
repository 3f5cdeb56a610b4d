import Foundation
import GRDB
import ProxyModel

/// Filtered reads: what `proxyapp flows --filter`, `proxyapp export` and later the TUI use.
///
/// The query's filter runs in SQL as far as `FilterSQLCondition` can take it; when that part is
/// only a superset, each selected row is checked again with `FlowFilter.matches`.
extension TrafficRepository {
    /// Calls `body` with every flow matching `query`, oldest (lowest id) first.
    ///
    /// One read transaction (a consistent snapshot, even while the proxy writes) and a cursor:
    /// one flow in memory at a time, whatever the capture's size. `body` must not read or write
    /// this database itself. A row that cannot be read as a flow throws
    /// `CaptureStoreError.malformedRow` (after the flows before it were delivered).
    /// `withMessages`: WebSocket flows come with their messages (`Flow.webSocketMessages`).
    public func forEachFlow(matching query: FlowQuery, withMessages: Bool = false, _ body: (Flow) throws -> Void) throws {
        try database.pool.read { db in
            let condition = try Self.condition(query, db)
            let filter = condition.isExact ? nil : query.filter
            let cursor = try FlowRecord.fetchCursor(
                db, sql: "SELECT * FROM flows WHERE \(condition.sql) ORDER BY id",
                arguments: StatementArguments(condition.arguments))
            while let record = try cursor.next() {
                var flow = database.bodyFiles.flow(from: record)
                if let filter {
                    flow = try Self.withMessages(flow, for: filter, db)
                    if !Self.matches(filter, flow, db) { continue }
                }
                if withMessages, flow.webSocketMessages == nil, flow.messageCount > 0, let id = flow.id {
                    flow.webSocketMessages = try Self.messages(flowID: id, db)
                }
                try body(flow)
            }
        }
    }

    /// The start of the earliest flow the SQL part of `query` selects, nil when none does.
    ///
    /// When the filter is not fully expressible in SQL this is the earliest of a superset, so it
    /// may be earlier than the earliest matching flow (never later): good for a HAR page's start
    /// time, not for anything that must be exact.
    public func earliestStart(matching query: FlowQuery) throws -> Date? {
        let milliseconds = try database.pool.read { db in
            let condition = try Self.condition(query, db)
            return try Int64.fetchOne(
                db, sql: "SELECT MIN(started_at) FROM flows WHERE \(condition.sql)",
                arguments: StatementArguments(condition.arguments))
        }
        return milliseconds.map(FlowRecord.date(milliseconds:))
    }

    /// How many flows match `query`, exactly: counted in SQL when the filter is, otherwise by
    /// reading the selected flows.
    public func count(matching query: FlowQuery) throws -> Int {
        guard FilterSQLCondition(query).isExact else {
            var count = 0
            try forEachFlow(matching: query) { _ in count += 1 }
            return count
        }
        return try database.pool.read { db in
            let condition = try Self.condition(query, db)
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM flows WHERE \(condition.sql)",
                arguments: StatementArguments(condition.arguments)) ?? 0
        }
    }

    /// The ids the SQL part of `query` alone selects, in order (for the equivalence tests).
    func flowIDsSelectedBySQL(_ query: FlowQuery) throws -> [Int64] {
        try database.pool.read { db in
            let condition = try Self.condition(query, db)
            return try Int64.fetchAll(
                db, sql: "SELECT id FROM flows WHERE \(condition.sql) ORDER BY id",
                arguments: StatementArguments(condition.arguments))
        }
    }
}
