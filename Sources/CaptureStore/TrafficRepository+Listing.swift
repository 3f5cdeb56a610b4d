import Foundation
import GRDB
import ProxyModel

extension TrafficRepository {
    /// The ids of every stored flow after `id`, ascending: what a list view over a large capture
    /// keeps in memory (8 bytes a flow: 8 MB for a million) to map row positions to flows, so it
    /// can fetch any window by id without `OFFSET` scans.
    public func flowIDs(after id: Int64 = 0) throws -> [Int64] {
        try database.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM flows WHERE id > ? ORDER BY id", arguments: [id])
        }
    }

    /// The flows with these ids, in the order given (ids not stored are left out), WITHOUT their
    /// bodies: `bytes` is empty, `size` and `truncated` are kept. A list view shows sizes, never
    /// bytes, and skipping the BLOBs keeps a screenful of rows a small read.
    public func listedFlows(ids: [Int64]) throws -> [Flow] {
        if ids.isEmpty { return [] }
        return try database.pool.read { db in
            var byID: [Int64: Flow] = [:]
            byID.reserveCapacity(ids.count)
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
                let placeholders = Array(repeating: "?", count: part.count).joined(separator: ",")
                let sql = "SELECT \(Self.listingColumns) FROM flows WHERE id IN (\(placeholders))"
                for record in try FlowRecord.fetchAll(db, sql: sql, arguments: StatementArguments(part)) {
                    if let id = record.flow.id { byID[id] = record.flow }
                }
            }
            return ids.compactMap { byID[$0] }
        }
    }

    /// Every column, with NULL in place of the body BLOBs (FlowRecord reads NULL as empty).
    static let listingColumns = columns(replacing: withoutBodies)

    private static let withoutBodies = [
        FlowRecord.Columns.requestBody.name: "NULL", FlowRecord.Columns.responseBody.name: "NULL",
        FlowRecord.Columns.forwardedRequestBody.name: "NULL", FlowRecord.Columns.originResponseBody.name: "NULL",
        FlowRecord.Columns.requestBodyFile.name: "NULL", FlowRecord.Columns.responseBodyFile.name: "NULL",
        FlowRecord.Columns.forwardedRequestBodyFile.name: "NULL", FlowRecord.Columns.originResponseBodyFile.name: "NULL",
    ]

    /// The listing columns with empty header lists too: for filters that read neither.
    static let listingColumnsWithoutHeaders = columns(replacing: withoutBodies.merging([
        FlowRecord.Columns.requestHeaders.name: "'[]'", FlowRecord.Columns.responseHeaders.name: "'[]'",
    ]) { $1 })

    private static func columns(replacing replaced: [String: String]) -> String {
        let names = [FlowRecord.Columns.id.name] + FlowRecord.insertColumns.map(\.name)
        return names.map { name in replaced[name].map { "\($0) AS \(name)" } ?? name }.joined(separator: ", ")
    }
}
