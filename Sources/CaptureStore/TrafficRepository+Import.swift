import Foundation
import GRDB
import ProxyModel

extension TrafficRepository {
    /// How many flows `insertAll` writes per transaction: small enough that a proxy capturing
    /// into the same file waits well under `TrafficDatabase.busyTimeout` for the write lock.
    public static let importChunkSize = 2_000

    /// Inserts many flows (an import) in several short transactions, returning their new ids in
    /// order. All or nothing for the caller: when a later chunk fails, the flows this call had
    /// already inserted are deleted again before the error is rethrown, so the store holds what
    /// it held before. Flows other writers stored meanwhile are never touched.
    ///
    /// One long transaction would do the same with less code, but a running proxy's capture
    /// writer gives up on a batch after waiting `busyTimeout` for the lock, and a large import
    /// would make it lose live flows.
    @discardableResult
    public func insertAll(_ flows: [Flow], chunkSize: Int = importChunkSize) throws -> [Int64] {
        precondition(chunkSize > 0, "chunkSize must be positive")
        var ids: [Int64] = []
        ids.reserveCapacity(flows.count)
        do {
            var start = flows.startIndex
            while start < flows.endIndex {
                let end = min(start + chunkSize, flows.endIndex)
                ids += try insert(Array(flows[start..<end]))
                start = end
            }
            return ids
        } catch {
            try? delete(ids: ids)
            throw error
        }
    }

    /// Deletes the flows with these ids (ids not stored are ignored), in one transaction.
    public func delete(ids: [Int64]) throws {
        if ids.isEmpty { return }
        try database.pool.write { db in
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = ids[chunk..<min(chunk + 500, ids.count)]
                _ = try FlowRecord.filter(keys: Array(part)).deleteAll(db)
            }
        }
    }
}
