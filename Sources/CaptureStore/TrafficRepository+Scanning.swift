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
        let condition = FilterSQLCondition(query)
        let arguments = StatementArguments([ids.lowerBound, ids.upperBound]) + StatementArguments(condition.arguments)
        let range = "id BETWEEN ? AND ? AND (\(condition.sql))"
        guard !condition.isExact, let filter = query.filter else {
            return try database.pool.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM flows WHERE \(range) ORDER BY id", arguments: arguments)
            }
        }
        let columns = filter.expression.readsBodies ? "*"
            : filter.expression.readsHeaders ? Self.listingColumns : Self.listingColumnsWithoutHeaders
        return try database.pool.read { db in
            var matching: [Int64] = []
            let cursor = try FlowRecord.fetchCursor(
                db, sql: "SELECT \(columns) FROM flows WHERE \(range) ORDER BY id", arguments: arguments)
            while let record = try cursor.next() {
                if let id = record.flow.id, filter.matches(record.flow) { matching.append(id) }
            }
            return matching
        }
    }

    /// Deletes every flow (pins are kept); returns how many were deleted.
    @discardableResult
    public func deleteAllFlows() throws -> Int {
        try database.pool.write { db in
            try FlowRecord.deleteAll(db)
        }
    }
}
