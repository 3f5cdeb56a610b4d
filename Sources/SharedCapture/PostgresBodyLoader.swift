import CaptureStore
import FlowFilter
import Foundation
import PostgresNIO
import ProxyModel

/// Turns a page of flows read without bodies into the flows a reader delivers: those the part
/// of a filter SQL could not decide keeps, with their bodies when they are wanted or the filter
/// reads them. Both readers (`PostgresFlowStore`, oldest first; `PostgresFlowReader`, newest
/// first) page this way, so they agree on every filter.
///
/// Bodies are loaded a bounded number of bytes at a time: a page of 200 rows of 16 MiB
/// downloads would otherwise be gigabytes in one result. The stored body sizes are asked first
/// (`octet_length`, answered from the values' headers, without reading them), then the flows
/// are read in groups of about `bytesPerRead` (a single larger flow alone), so what is in memory
/// at once is one group. A filter that reads bodies also sees a WebSocket's messages (they are
/// its bodies, as in the local capture).
enum PostgresBodyLoader {
    static let bytesPerRead = 8 << 20

    /// Runs one statement (a session's, or a store's under its lock).
    typealias Query = (String, PostgresBindings) throws -> [PostgresRow]

    /// Calls `body` with those of `flows` (read without bodies, in the reader's order) that
    /// `filter` keeps (nil: all), with bodies when `bodies` or when the filter reads them, until
    /// `body` returns false (then returns false). With `skippingMalformed`, a row that cannot be
    /// read as a flow once its bodies are loaded is left out, else its error is thrown.
    @discardableResult
    static func deliver(_ flows: [Flow], keptBy filter: FlowFilter?, bodies: Bool, skippingMalformed: Bool,
                        query: Query, _ body: (Flow) throws -> Bool) throws -> Bool {
        let filterReadsBodies = filter?.expression.readsBodies(besidesFullText: false) == true
        guard bodies || filterReadsBodies else {
            for flow in flows where filter?.matches(flow) ?? true {
                if try !body(flow) { return false }
            }
            return true
        }
        let kept = filterReadsBodies ? flows : flows.filter { filter?.matches($0) ?? true }
        return try forEach(kept.compactMap(\.id), skippingMalformed: skippingMalformed, query: query) { flow in
            guard let filter, filterReadsBodies else { return try body(flow) }
            var flow = flow
            if flow.messageCount > 0, let id = flow.id {
                flow.webSocketMessages = try messages(flowID: id, offset: 0, limit: .max, query: query)
            }
            return filter.matches(flow) ? try body(flow) : true
        }
    }

    /// A WebSocket flow's messages, oldest first, from `offset`, at most `limit`.
    static func messages(flowID id: Int64, offset: Int, limit: Int, query: Query) throws -> [CapturedMessage] {
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(Int64(clamping: limit))
        binds.append(Int64(offset))
        return try query("""
            SELECT direction, time, kind, size, truncated, compressed, close_code, close_reason, payload
            FROM proxyapp_messages WHERE flow_id = $1 ORDER BY id LIMIT $2 OFFSET $3
            """, binds).compactMap(PostgresFlowCodec.message(from:))
    }

    /// Calls `body` with the flows `ids`, in that order, bodies included, until it returns false
    /// (then returns false). Ids no longer stored are skipped; a row that cannot be read as a
    /// flow is skipped with `skippingMalformed`, else its error is thrown.
    @discardableResult
    private static func forEach(_ ids: [Int64], skippingMalformed: Bool, query: Query,
                                _ body: (Flow) throws -> Bool) throws -> Bool {
        guard !ids.isEmpty else { return true }
        var binds = PostgresBindings()
        binds.append(ids)
        var sizes: [Int64: Int64] = [:]
        for row in try query("""
            SELECT id, coalesce(octet_length(request_body), 0) + coalesce(octet_length(response_body), 0)
              + coalesce(octet_length(forwarded_request_body), 0) + coalesce(octet_length(origin_response_body), 0)
            FROM proxyapp_flows WHERE id = ANY($1)
            """, binds) {
            let (id, size) = try row.decode((Int64, Int64).self)
            sizes[id] = size
        }
        var group: [Int64] = []
        var groupBytes: Int64 = 0
        func loadGroup() throws -> Bool {
            defer {
                group.removeAll(keepingCapacity: true)
                groupBytes = 0
            }
            guard !group.isEmpty else { return true }
            var binds = PostgresBindings()
            binds.append(group)
            var byID: [Int64: Flow] = [:]
            for row in try query("SELECT \(PostgresFlowCodec.selectColumns) FROM proxyapp_flows WHERE id = ANY($1)", binds) {
                let flow: Flow
                do {
                    flow = try PostgresFlowCodec.flow(from: row)
                } catch where skippingMalformed {
                    continue
                }
                if let id = flow.id { byID[id] = flow }
            }
            for id in group {
                guard let flow = byID.removeValue(forKey: id) else { continue }
                if try !body(flow) { return false }
            }
            return true
        }
        for id in ids {
            guard let size = sizes[id] else { continue }
            if !group.isEmpty, groupBytes + size > Int64(bytesPerRead) {
                if try !loadGroup() { return false }
            }
            group.append(id)
            groupBytes += size
        }
        return try loadGroup()
    }
}
