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
        if filter == nil {
            var binds = PostgresBindings()
            let condition = Self.condition(proxy: proxy, since: since, binds: &binds)
            let rows = try session.query("SELECT count(*) FROM proxyapp_flows WHERE \(condition)", binds)
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
        var count = 0
        try forEachFlowNewestFirst(matching: filter, proxy: proxy, since: since, bodies: false) { _ in
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
    private func forEachFlowNewestFirst(matching filter: FlowFilter?, proxy: String?, since: Date?, bodies: Bool,
                                        _ body: (Flow) throws -> Bool) throws {
        let withBodies = bodies || filter?.expression.readsBodies(besidesFullText: false) == true
        let columns = withBodies ? PostgresFlowCodec.selectColumns : PostgresFlowCodec.selectColumnsWithoutBodies
        var below = Int64.max
        while true {
            var binds = PostgresBindings()
            binds.append(below)
            let condition = "id < $1 AND " + Self.condition(proxy: proxy, since: since, binds: &binds)
            binds.append(Int64(pageSize))
            let rows = try session.query("""
                SELECT \(columns) FROM proxyapp_flows WHERE \(condition)
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

    /// The SQL that narrows rows by proxy and start time (`true` for neither), its values
    /// appended to `binds`.
    private static func condition(proxy: String?, since: Date?, binds: inout PostgresBindings) -> String {
        var parts: [String] = []
        if let proxy {
            binds.append(PostgresFlowCodec.text(proxy))
            parts.append("proxy = $\(binds.count)")
        }
        if let since {
            binds.append(CaptureTime.milliseconds(since))
            parts.append("started_at >= $\(binds.count)")
        }
        return parts.isEmpty ? "true" : parts.joined(separator: " AND ")
    }
}
