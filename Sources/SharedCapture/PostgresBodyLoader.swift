import CaptureStore
import Foundation
import PostgresNIO
import ProxyModel

/// Loads flows with their bodies a bounded number of bytes at a time, for the reads that need
/// bodies (an export, a search, a filter on bodies): a page of 200 rows of 16 MiB downloads
/// would otherwise be gigabytes in one result.
///
/// The readers page through rows without bodies; for the flows of a page that need them, this
/// asks the stored body sizes (`octet_length`, answered from the values' headers, without
/// reading them), then reads the flows in groups of about `bytesPerRead` (a single larger flow
/// alone), so what is in memory at once is one group.
enum PostgresBodyLoader {
    static let bytesPerRead = 8 << 20

    /// Calls `body` with the flows `ids`, in that order, bodies included, until it returns false
    /// (then returns false). Ids no longer stored are skipped; a row that cannot be read as a
    /// flow is skipped with `skippingMalformed`, else its error is thrown.
    @discardableResult
    static func forEach(_ ids: [Int64], skippingMalformed: Bool,
                        query: (String, PostgresBindings) throws -> [PostgresRow],
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
