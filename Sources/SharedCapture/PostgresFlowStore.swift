import CaptureStore
import FlowFilter
import Foundation
import PostgresNIO
import ProxyModel

/// The shared capture as a `FlowStore`: what `proxyapp tui --store` and `export --store` read,
/// live, while a team's proxies write.
///
/// Tailing by id is exact: `lastFlowID` stops below ids a writer has announced and not yet
/// committed (`PostgresTailWatermark`). Filters run in SQL as far as `PostgresFilterCondition` is exact; the rest is checked
/// in Swift on rows read a page at a time, without bodies unless the filter reads them.
///
/// One session serves every caller (the TUI's list feed and its two worker lanes), one
/// statement (or pin change) at a time under `lock`; long reads (an export) take it per page, so the list keeps
/// polling between pages.
public final class PostgresFlowStore: FlowStore, @unchecked Sendable {
    private let session: PostgresSession
    private let lock = NSLock()
    /// Ids per statement for listed rows, and rows per page of reads checked in Swift.
    static let idsPerStatement = 1_000
    let rowsPerPage: Int

    /// `rowsPerPage`: rows per statement when rows are read whole (an export, a filter checked
    /// in Swift).
    public init(session: PostgresSession, rowsPerPage: Int = 200) {
        self.session = session
        self.rowsPerPage = max(1, rowsPerPage)
    }

    public var isShared: Bool { true }

    /// Runs one statement under the lock.
    private func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        lock.lock()
        defer { lock.unlock() }
        return try session.query(sql, binds)
    }

    public func lastFlowID() throws -> Int64 {
        // The highest id below every batch still on its way (`PostgresTailWatermark`).
        try query(PostgresTailWatermark.watermarkSQL).first?.decode(Int64.self) ?? 0
    }

    public func matchingFlowIDs(in ids: ClosedRange<Int64>, query flowQuery: FlowQuery) throws -> [Int64] {
        let condition = PostgresFilterCondition(flowQuery)
        let range = "id BETWEEN \(ids.lowerBound) AND \(ids.upperBound) AND \(condition.sql)"
        guard !condition.isExact, let filter = flowQuery.filter else {
            return try query("SELECT id FROM proxyapp_flows WHERE \(range) ORDER BY id").map { try $0.decode(Int64.self) }
        }
        // Rows are checked in Swift: read them a page at a time, not the whole range at once.
        var matching: [Int64] = []
        var after = ids.lowerBound - 1
        while true {
            let rows = try query("SELECT \(PostgresFlowCodec.selectColumnsWithoutBodies) FROM proxyapp_flows "
                                 + "WHERE id > \(after) AND \(range) ORDER BY id LIMIT \(rowsPerPage)")
            after = try rows.last.map { try $0.makeRandomAccess()[0].decode(Int64.self) } ?? after
            matching += try matches(rows, filter)
            if rows.count < rowsPerPage { return matching }
        }
    }

    public func matchingFlowIDs(among ids: [Int64], query flowQuery: FlowQuery) throws -> [Int64] {
        let condition = PostgresFilterCondition(flowQuery)
        let filter = condition.isExact ? nil : flowQuery.filter
        let columns = filter == nil ? "id" : PostgresFlowCodec.selectColumnsWithoutBodies
        var found: Set<Int64> = []
        for start in stride(from: 0, to: ids.count, by: rowsPerPage) {
            var binds = PostgresBindings()
            binds.append(Array(ids[start..<min(start + rowsPerPage, ids.count)]))
            let rows = try query("SELECT \(columns) FROM proxyapp_flows WHERE id = ANY($1) AND \(condition.sql) ORDER BY id",
                                 binds)
            if let filter {
                found.formUnion(try matches(rows, filter))
            } else {
                found.formUnion(try rows.map { try $0.decode(Int64.self) })
            }
        }
        return ids.filter(found.contains)
    }

    /// The ids of `rows` (read without bodies, ascending) whose flows match `filter`
    /// (`PostgresBodyLoader.deliver`). A row no proxyapp wrote (edited by hand) matches nothing and
    /// never stops the view.
    private func matches(_ rows: [PostgresRow], _ filter: FlowFilter) throws -> [Int64] {
        var matching: [Int64] = []
        try PostgresBodyLoader.deliver(rows.compactMap { try? PostgresFlowCodec.flow(from: $0) }, keptBy: filter, bodies: false,
                                       skippingMalformed: true, query: query) { flow in
            if let id = flow.id { matching.append(id) }
            return true
        }
        return matching
    }

    public func listedFlows(ids: [Int64]) throws -> [Flow] {
        var byID: [Int64: Flow] = [:]
        for start in stride(from: 0, to: ids.count, by: Self.idsPerStatement) {
            var binds = PostgresBindings()
            binds.append(Array(ids[start..<min(start + Self.idsPerStatement, ids.count)]))
            for row in try query(
                "SELECT \(PostgresFlowCodec.selectColumnsWithoutBodies) FROM proxyapp_flows WHERE id = ANY($1)", binds) {
                // A row that cannot be read is left out, as a deleted one: the list shows the others.
                if let flow = try? PostgresFlowCodec.flow(from: row), let id = flow.id { byID[id] = flow }
            }
        }
        return ids.compactMap { byID[$0] }
    }

    public func flow(id: Int64) throws -> Flow? {
        var binds = PostgresBindings()
        binds.append(id)
        return try query("SELECT \(PostgresFlowCodec.selectColumns) FROM proxyapp_flows WHERE id = $1", binds)
            .first.map(PostgresFlowCodec.flow(from:))
    }

    public func messages(flowID id: Int64, offset: Int, limit: Int) throws -> [CapturedMessage] {
        try PostgresBodyLoader.messages(flowID: id, offset: offset, limit: limit, query: query)
    }

    public func count(matching flowQuery: FlowQuery) throws -> Int {
        let condition = PostgresFilterCondition(flowQuery)
        guard condition.isExact else {
            var count = 0
            try forEachFlow(matching: flowQuery, withMessages: false, bodies: false) { _ in count += 1 }
            return count
        }
        return Int(try query("SELECT count(*) FROM proxyapp_flows WHERE \(condition.sql)").first?.decode(Int64.self) ?? 0)
    }

    public func forEachFlow(matching flowQuery: FlowQuery, withMessages: Bool, _ body: (Flow) throws -> Void) throws {
        try forEachFlow(matching: flowQuery, withMessages: withMessages, bodies: true, body)
    }

    /// Every matching flow, oldest first, a page at a time (each page its own statement: flows
    /// stored meanwhile with higher ids are included, as a live capture's reader expects); with
    /// `bodies`, those of each page are loaded a bounded number of bytes at a time.
    private func forEachFlow(matching flowQuery: FlowQuery, withMessages: Bool, bodies: Bool,
                             _ body: (Flow) throws -> Void) throws {
        let condition = PostgresFilterCondition(flowQuery)
        var after: Int64 = 0
        while true {
            let rows = try query("""
                SELECT \(PostgresFlowCodec.selectColumnsWithoutBodies) FROM proxyapp_flows
                WHERE id > \(after) AND \(condition.sql) ORDER BY id LIMIT \(rowsPerPage)
                """)
            let flows = try rows.map(PostgresFlowCodec.flow(from:))
            after = flows.last?.id ?? after
            try PostgresBodyLoader.deliver(flows, keptBy: condition.isExact ? nil : flowQuery.filter, bodies: bodies,
                                           skippingMalformed: false, query: query) { flow in
                var flow = flow
                if withMessages, flow.webSocketMessages == nil, flow.messageCount > 0, let id = flow.id {
                    flow.webSocketMessages = try messages(flowID: id, offset: 0, limit: .max)
                }
                try body(flow)
                return true
            }
            if rows.count < rowsPerPage { return }
        }
    }

    public func earliestStart(matching flowQuery: FlowQuery) throws -> Date? {
        let condition = PostgresFilterCondition(flowQuery)
        let rows = try query("SELECT min(started_at) FROM proxyapp_flows WHERE \(condition.sql)")
        return try rows.first?.decode(Int64?.self).map(CaptureTime.date(milliseconds:))
    }

    @discardableResult
    public func setMarked(_ marked: Bool, id: Int64) throws -> Bool {
        var binds = PostgresBindings()
        binds.append(marked)
        binds.append(id)
        return try !query("UPDATE proxyapp_flows SET marked = $1 WHERE id = $2 RETURNING id", binds).isEmpty
    }

    public func delete(ids: [Int64]) throws {
        for start in stride(from: 0, to: ids.count, by: Self.idsPerStatement) {
            var binds = PostgresBindings()
            binds.append(Array(ids[start..<min(start + Self.idsPerStatement, ids.count)]))
            try query("DELETE FROM proxyapp_flows WHERE id = ANY($1)", binds)
        }
    }

    @discardableResult
    public func deleteAllFlows() throws -> Int {
        Int(try query("WITH gone AS (DELETE FROM proxyapp_flows RETURNING 1) SELECT count(*) FROM gone")
            .first?.decode(Int64.self) ?? 0)
    }

    /// The shared pins (`PostgresPinStore`), every proxy's.
    public func pinnedDomains() throws -> [PinnedDomain] {
        lock.lock()
        defer { lock.unlock() }
        return try PostgresPinStore(session: session).pinnedDomains()
    }

    @discardableResult
    public func removePin(_ key: PinnedDomain.Key) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return try PostgresPinStore(session: session).removePin(key)
    }
}
