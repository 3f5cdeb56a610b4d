import CaptureStore
import FlowFilter
import Foundation
import PostgresNIO
import ProxyModel

/// Reads the shared capture for `proxyapp flows --store`: the newest flows, a count, one flow.
///
/// Flows come with `Flow.proxyName` set. A filter runs in SQL as far as
/// `PostgresFilterCondition` is exact; otherwise each row SQL selects is checked in Swift
/// (`FlowFilter.matches`, the same evaluator the SQLite capture falls back to). Rows are read
/// newest first, `pageSize` at a time, so `--limit 50` on a large capture reads as many pages as
/// it takes to find 50 matches and no more.
public struct PostgresFlowReader {
    public let session: PostgresSession
    /// Rows read per query while looking for matches.
    public var pageSize = 500

    public init(session: PostgresSession) {
        self.session = session
    }

    /// Brings the schema up to date (a reader may be the first to use a new database).
    public func prepare() throws {
        try PostgresSchema.migrate(session)
    }

    /// The `limit` newest flows matching `filter` (nil: all), newest first; only those of
    /// `proxy` when it is given, and only those started at or after `since`. With `bodies`
    /// false the flows come without their bodies (empty, sizes kept) unless the filter reads them.
    public func latestFlows(limit: Int, matching filter: FlowFilter? = nil, proxy: String? = nil, since: Date? = nil,
                            bodies: Bool = true) throws -> [Flow] {
        var found: [Flow] = []
        try forEachFlowNewestFirst(matching: filter, proxy: proxy, since: since, bodies: bodies) { flow in
            found.append(flow)
            return found.count < limit
        }
        return found
    }

    /// How many flows match `filter` (and are `proxy`'s, and started at or after `since`, when
    /// given).
    public func count(matching filter: FlowFilter? = nil, proxy: String? = nil, since: Date? = nil) throws -> Int {
        let sql = PostgresFilterCondition(FlowQuery(filter: filter, since: since))
        if sql.isExact {
            var binds = PostgresBindings()
            let condition = Self.condition(proxy: proxy, binds: &binds)
            let rows = try session.query("SELECT count(*) FROM proxyapp_flows WHERE \(condition) AND \(sql.sql)", binds)
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
        var count = 0
        try forEachFlowNewestFirst(matching: filter, proxy: proxy, since: since, bodies: false) { _ in
            count += 1
            return true
        }
        return count
    }

    /// `proxyapp search` on the shared store: the `limit` newest flows matching `filter` (which
    /// holds the search), each with excerpts of `search`. The shared store has no word index:
    /// flows are read newest first, with their bodies, and searched in Swift, so a search that
    /// matches little reads much of the capture.
    public func latestFullTextHits(_ search: FullTextQuery, matching filter: FlowFilter, limit: Int) throws -> [FullTextHit] {
        try latestFlows(limit: limit, matching: filter, bodies: true).map { FullTextHit(matching: search, in: $0) }
    }

    /// The flow with this id, or nil.
    public func flow(id: Int64) throws -> Flow? {
        var binds = PostgresBindings()
        binds.append(id)
        let rows = try session.query("SELECT \(PostgresFlowCodec.selectColumns) FROM proxyapp_flows WHERE id = $1", binds)
        return try rows.first.map(PostgresFlowCodec.flow(from:))
    }

    /// Calls `body` with each matching flow, newest first, until it returns false. Pages are
    /// read without bodies, then delivered by `PostgresBodyLoader` (bodies loaded a bounded number
    /// of bytes at a time when wanted or when the filter reads them).
    private func forEachFlowNewestFirst(matching filter: FlowFilter?, proxy: String?, since: Date?, bodies: Bool,
                                        _ body: (Flow) throws -> Bool) throws {
        let sql = PostgresFilterCondition(FlowQuery(filter: filter, since: since))
        var below = Int64.max
        while true {
            var binds = PostgresBindings()
            binds.append(below)
            let condition = "id < $1 AND " + Self.condition(proxy: proxy, binds: &binds) + " AND " + sql.sql
            binds.append(Int64(pageSize))
            let rows = try session.query("""
                SELECT \(PostgresFlowCodec.selectColumnsWithoutBodies) FROM proxyapp_flows WHERE \(condition)
                ORDER BY id DESC LIMIT $\(binds.count)
                """, binds)
            let flows = try rows.map(PostgresFlowCodec.flow(from:))
            below = flows.last?.id ?? below
            guard try PostgresBodyLoader.deliver(flows, keptBy: sql.isExact ? nil : filter, bodies: bodies,
                                                 skippingMalformed: false, query: session.query, body),
                  rows.count == pageSize else { return }
        }
    }

    /// The SQL that narrows rows to one proxy's (`true` for every proxy), its value appended to
    /// `binds`.
    private static func condition(proxy: String?, binds: inout PostgresBindings) -> String {
        guard let proxy else { return "true" }
        binds.append(PostgresFlowCodec.text(proxy))
        return "proxy = $\(binds.count)"
    }
}
