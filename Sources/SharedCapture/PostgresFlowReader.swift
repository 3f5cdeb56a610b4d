import CaptureStore
import FlowFilter
import Foundation
import PostgresNIO
import ProxyModel

/// Reads the shared capture for `proxyapp flows --store`: the newest flows, a count, one flow.
///
/// Flows come with `Flow.proxyName` set. A filter (`~proxy` included) is checked in Swift on
/// every row read (`FlowFilter.matches`, the same evaluator the SQLite capture falls back to),
/// after SQL has narrowed the rows by proxy name when the reader asks for one proxy; a
/// translation of the whole filter language to PostgreSQL is not there yet. Rows are read newest first, `pageSize` at a time, so `--limit 50` on a large
/// capture reads as many pages as it takes to find 50 matches and no more.
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
    /// `proxy` when it is given.
    public func latestFlows(limit: Int, matching filter: FlowFilter? = nil, proxy: String? = nil) throws -> [Flow] {
        var found: [Flow] = []
        try forEachFlowNewestFirst(matching: filter, proxy: proxy) { flow in
            found.append(flow)
            return found.count < limit
        }
        return found
    }

    /// How many flows match `filter` (and are `proxy`'s, when given).
    public func count(matching filter: FlowFilter? = nil, proxy: String? = nil) throws -> Int {
        if filter == nil {
            var binds = PostgresBindings()
            var condition = "true"
            if let proxy {
                binds.append(PostgresFlowCodec.text(proxy))
                condition = "proxy = $1"
            }
            let rows = try session.query("SELECT count(*) FROM proxyapp_flows WHERE \(condition)", binds)
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
        var count = 0
        try forEachFlowNewestFirst(matching: filter, proxy: proxy) { _ in
            count += 1
            return true
        }
        return count
    }

    /// The flow with this id, or nil.
    public func flow(id: Int64) throws -> Flow? {
        var binds = PostgresBindings()
        binds.append(id)
        let rows = try session.query("SELECT \(PostgresFlowCodec.selectColumns) FROM proxyapp_flows WHERE id = $1", binds)
        return try rows.first.map(PostgresFlowCodec.flow(from:))
    }

    /// Calls `body` with each matching flow, newest first, until it returns false.
    private func forEachFlowNewestFirst(matching filter: FlowFilter?, proxy: String?,
                                        _ body: (Flow) throws -> Bool) throws {
        var below = Int64.max
        while true {
            var binds = PostgresBindings()
            binds.append(below)
            var condition = "id < $1"
            if let proxy {
                binds.append(PostgresFlowCodec.text(proxy))
                condition += " AND proxy = $2"
            }
            binds.append(Int64(pageSize))
            let rows = try session.query("""
                SELECT \(PostgresFlowCodec.selectColumns) FROM proxyapp_flows WHERE \(condition)
                ORDER BY id DESC LIMIT $\(binds.count)
                """, binds)
            for row in rows {
                let flow = try PostgresFlowCodec.flow(from: row)
                below = flow.id ?? below
                if let filter, !filter.matches(flow) { continue }
                if try !body(flow) { return }
            }
            if rows.count < pageSize { return }
        }
    }
}
