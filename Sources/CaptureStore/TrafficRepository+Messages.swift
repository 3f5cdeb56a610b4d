import Foundation
import GRDB
import ProxyModel

/// WebSocket messages: written with their flow's batch (`CaptureWriter`), read by flow.
extension TrafficRepository {
    /// Writes a capture batch in one transaction and in order: flows (an open one's row id is
    /// remembered in `openRows` under its key), messages of open flows (their flow's
    /// `message_count` grows), and ends of open flows (counts and end time set, the key
    /// forgotten). Messages and ends whose flow is unknown (it was dropped) are skipped.
    /// Returns the flows' new ids, in order.
    @discardableResult
    func write(_ items: [CaptureItem], openRows: inout [OpenFlowKey: Int64]) throws -> [Int64] {
        try database.pool.write { db in
            let flows = try FlowInsertStatement(db, sql: Self.flowInsertSQL,
                                                    bodyFiles: database.bodyFiles)
            defer { flows.finalize() }
            var ids: [Int64] = []
            ids.reserveCapacity(items.count)
            for item in items {
                switch item {
                case .flow(let flow, let key):
                    let id = try flows.insert(flow)
                    ids.append(id)
                    if let key { openRows[key] = id }
                case .messages(let messages, let key):
                    guard let id = openRows[key] else { continue }
                    try Self.insertMessages(messages, flowID: id, db)
                    try db.execute(sql: "UPDATE flows SET message_count = message_count + ? WHERE id = ?",
                                   arguments: [messages.count, id])
                case .end(let end, let key):
                    guard let id = openRows.removeValue(forKey: key) else { continue }
                    try db.execute(sql: """
                        UPDATE flows SET finished_at = ?1, bytes_up = ?2, bytes_down = ?3, error = COALESCE(?4, error),
                          note = CASE WHEN ?5 IS NULL THEN note WHEN note IS NULL THEN ?5 ELSE note || '; ' || ?5 END
                        WHERE id = ?6
                        """, arguments: [FlowRecord.milliseconds(end.finishedAt), end.bytesUp, end.bytesDown, end.error,
                                          end.note, id])
                }
            }
            return ids
        }
    }

    /// Inserts `messages` of flow `id` (its `message_count` is the caller's).
    static func insertMessages(_ messages: [CapturedMessage], flowID id: Int64, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO messages (flow_id, direction, time, kind, size, truncated, compressed, close_code, close_reason, payload)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for captured in messages {
            try statement.execute(arguments: [
                id, captured.direction.rawValue, FlowRecord.milliseconds(captured.time), captured.kind.rawValue,
                captured.size, captured.truncated, captured.compressed, captured.closeCode, captured.closeReason,
                captured.payload.isEmpty ? nil : captured.payload,
            ])
        }
    }

    /// The messages of flow `id`, oldest first, from the `offset`-th, at most `limit`.
    public func messages(flowID id: Int64, offset: Int = 0, limit: Int = .max) throws -> [CapturedMessage] {
        try database.pool.read { db in try Self.messages(flowID: id, offset: offset, limit: limit, db) }
    }

    static func messages(flowID id: Int64, offset: Int = 0, limit: Int = .max, _ db: Database) throws -> [CapturedMessage] {
        try Row.fetchAll(db, sql: """
            SELECT direction, time, kind, size, truncated, compressed, close_code, close_reason, payload
            FROM messages WHERE flow_id = ? ORDER BY id LIMIT ? OFFSET ?
            """, arguments: [id, Int64(clamping: limit), offset]).compactMap(Self.message)
    }

    /// A stored message; nil for a row no version of ProxyApp writes (an unknown kind or
    /// direction), so a hand-edited row never makes the others unreadable.
    private static func message(_ row: Row) -> CapturedMessage? {
        guard let direction = (row["direction"] as String?).flatMap(CapturedMessage.Direction.init(rawValue:)),
              let kind = (row["kind"] as String?).flatMap(CapturedMessage.Kind.init(rawValue:)),
              let time = row["time"] as Int64?
        else { return nil }
        return CapturedMessage(
            direction: direction, time: FlowRecord.date(milliseconds: time), kind: kind,
            payload: (row["payload"] as Data?) ?? Data(), size: (row["size"] as Int64?) ?? 0,
            truncated: (row["truncated"] as Bool?) ?? false, compressed: (row["compressed"] as Bool?) ?? false,
            closeCode: row["close_code"] as Int?, closeReason: row["close_reason"] as String?)
    }
}
