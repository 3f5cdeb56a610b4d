import CaptureStore
import Foundation
import Logging
import PostgresNIO
import ProxyModel

/// The capture writer's backend for a shared PostgreSQL capture: every proxy of a team writes
/// its flows, tagged with its name, into the same `proxyapp_flows`.
///
/// A batch is one transaction; its plain flows go in `COPY`s of up to `rowsPerStatement` rows
/// and about `bytesPerStatement` body bytes, WebSocket flows one at a time, as their id is
/// needed for the messages that follow. When the server cannot
/// be reached the error says so (`isUnreachable`) and `CaptureWriter` keeps the batch and
/// tries again; the session connects again on that next try.
///
/// Before a batch takes its first ids it announces them (`PostgresTailWatermark`), so readers
/// that tail by id never pass ids still on their way.
public final class PostgresCaptureBackend: CaptureBackend, @unchecked Sendable {
    public let session: PostgresSession
    /// The name every flow this proxy writes is tagged with (`--name`).
    public let proxyName: String
    /// The schema was checked in this process (writer thread only, like every method here:
    /// hence `@unchecked Sendable`).
    private var migrated = false

    /// Rows per COPY (a writer batch is 512 flows at most anyway).
    static let rowsPerStatement = 512
    /// Body bytes per COPY, at most about (one flow's may pass it). Bodies spooled to disk
    /// while their exchange ran are read back to be sent, and the capture queue does not count
    /// them: without this bound, 512 spooled 16 MiB downloads would be 8 GiB in one statement.
    static let bytesPerStatement = 8 << 20

    /// The captured body bytes `flow` sends (spooled ones included).
    static func storedBodyBytes(_ flow: Flow) -> Int {
        flow.requestBody.storedCount + flow.responseBody.storedCount
            + (flow.forwardedRequest?.body?.storedCount ?? 0) + (flow.originResponse?.body?.storedCount ?? 0)
    }

    public init(session: PostgresSession, proxyName: String) {
        self.session = session
        self.proxyName = proxyName
    }

    public var storeDescription: String { session.address.redacted }

    /// Connects and brings the schema up to date now: `proxyapp run` calls it before it starts
    /// so that a wrong URL or password is a clear error at start rather than a log line later.
    public func prepare() throws {
        try PostgresSchema.migrate(session)
        migrated = true
    }

    public func write(_ items: [CaptureItem], openRows: inout [OpenFlowKey: Int64]) throws -> [Int64] {
        if !migrated { try prepare() }
        var rows = openRows
        let ids = try session.transaction { () throws -> [Int64] in
            var ids: [Int64] = []
            ids.reserveCapacity(items.count)
            var pending: [Flow] = []
            var pendingBytes = 0
            var announced = false
            func insert(_ flows: [Flow]) throws -> [Int64] {
                if !announced {
                    try PostgresTailWatermark.announce(session)
                    announced = true
                }
                return try self.insert(flows)
            }
            func insertPending() throws {
                guard !pending.isEmpty else { return }
                ids += try insert(pending)
                pending.removeAll(keepingCapacity: true)
                pendingBytes = 0
            }
            for item in items {
                switch item {
                case .flow(let flow, nil):
                    pending.append(flow)
                    pendingBytes += Self.storedBodyBytes(flow)
                    if pending.count == Self.rowsPerStatement || pendingBytes >= Self.bytesPerStatement {
                        try insertPending()
                    }
                case .flow(let flow, let key?):
                    try insertPending()
                    let id = try insert([flow])[0]
                    ids.append(id)
                    rows[key] = id
                case .messages(let messages, let key):
                    try insertPending()
                    guard let id = rows[key] else { continue }
                    try insertMessages(messages, flowID: id)
                case .end(let end, let key):
                    try insertPending()
                    guard let id = rows.removeValue(forKey: key) else { continue }
                    try finish(id, with: end)
                }
            }
            try insertPending()
            return ids
        }
        openRows = rows
        return ids
    }

    /// Inserts `flows` with one `COPY` and returns their ids, in order: the ids are taken from
    /// the table's sequence first (one round trip), then written with the rows.
    ///
    /// COPY rather than multi-row INSERTs: PostgreSQL parses no statement of 26,000 parameters
    /// per batch, and the server spends about half the CPU per flow (the bench's `shared` phase,
    /// in the note of #20).
    private func insert(_ flows: [Flow]) throws -> [Int64] {
        var count = PostgresBindings()
        count.append(Int64(flows.count))
        let rows = try session.query(
            "SELECT nextval('proxyapp_flows_id_seq') FROM generate_series(1, $1)", count)
        let ids = try rows.map { try $0.decode(Int64.self) }.sorted()
        guard ids.count == flows.count else {
            throw SharedCaptureError.server(message: "the sequence gave \(ids.count) ids for \(flows.count) flows",
                                            sqlState: "XX000")
        }
        var data = ByteBuffer()
        data.reserveCapacity(flows.count * 1024)
        for (flow, id) in zip(flows, ids) {
            PostgresFlowCodec.appendCopyText(flow, id: id, proxy: proxyName, to: &data)
        }
        try session.copy(into: "proxyapp_flows", columns: ["id"] + PostgresFlowCodec.insertColumns, data: data)
        return ids
    }

    private func insertMessages(_ messages: [CapturedMessage], flowID id: Int64) throws {
        guard !messages.isEmpty else { return }
        for chunk in stride(from: 0, to: messages.count, by: 1000) {
            let part = messages[chunk..<min(chunk + 1000, messages.count)]
            var sql = """
                INSERT INTO proxyapp_messages (flow_id, direction, time, kind, size, truncated, compressed, \
                close_code, close_reason, payload) VALUES
                """
            var binds = PostgresBindings(capacity: part.count * 10)
            for (row, message) in part.enumerated() {
                let base = row * 10
                sql += (row == 0 ? " (" : ", (") + (1...10).map { "$\(base + $0)" }.joined(separator: ", ") + ")"
                binds.append(id)
                binds.append(message.direction.rawValue)
                binds.append(CaptureTime.milliseconds(message.time))
                binds.append(message.kind.rawValue)
                binds.append(message.size)
                binds.append(message.truncated)
                binds.append(message.compressed)
                binds.append(message.closeCode.map(Int64.init))
                binds.append(PostgresFlowCodec.text(message.closeReason))
                binds.append(message.payload.isEmpty ? nil : ByteBuffer(data: message.payload))
            }
            try session.query(sql, binds)
        }
        var binds = PostgresBindings()
        binds.append(Int64(messages.count))
        binds.append(id)
        try session.query("UPDATE proxyapp_flows SET message_count = message_count + $1 WHERE id = $2", binds)
    }

    private func finish(_ id: Int64, with end: OpenFlowEnd) throws {
        var binds = PostgresBindings()
        binds.append(CaptureTime.milliseconds(end.finishedAt))
        binds.append(end.bytesUp)
        binds.append(end.bytesDown)
        binds.append(PostgresFlowCodec.text(end.error))
        binds.append(PostgresFlowCodec.text(end.note))
        binds.append(id)
        try session.query("""
            UPDATE proxyapp_flows SET finished_at = $1, bytes_up = $2, bytes_down = $3, error = COALESCE($4, error),
              note = CASE WHEN $5::text IS NULL THEN note WHEN note IS NULL THEN $5 ELSE note || '; ' || $5 END
            WHERE id = $6
            """, binds)
    }

    public func isUnreachable(_ error: any Error) -> Bool {
        if case SharedCaptureError.unreachable = error { return true }
        return false
    }

    /// `--max-age` and `--max-flows` over the whole shared capture (every proxy applies the
    /// same limits, so a team sets them alike); `--max-db-size` is the database's business
    /// (PostgreSQL reuses the space of removed rows after its autovacuum) and is not applied.
    public func enforce(_ policy: RetentionPolicy, batchSize: Int, maxBatches: Int,
                        protected: Set<Int64>) throws -> PruneOutcome {
        var outcome = PruneOutcome()
        guard policy.maxAge != nil || policy.maxFlows != nil, batchSize > 0 else { return outcome }
        if !migrated { try prepare() }
        let kept = policy.keepMarked ? "NOT marked" : "true"
        var binds = PostgresBindings()
        var conditions: [String] = []
        if let age = policy.maxAge {
            binds.append(CaptureTime.milliseconds(Date().addingTimeInterval(-age)))
            conditions.append("started_at < $\(binds.count)")
        }
        if let maxFlows = policy.maxFlows {
            // The newest flow past the limit: it and every older one (not kept) go.
            var offset = PostgresBindings()
            offset.append(Int64(maxFlows))
            let rows = try session.query(
                "SELECT id FROM proxyapp_flows WHERE \(kept) ORDER BY id DESC OFFSET $1 LIMIT 1", offset)
            if let newestOver = try rows.first?.decode(Int64.self) {
                binds.append(newestOver)
                conditions.append("id <= $\(binds.count)")
            }
        }
        guard !conditions.isEmpty else { return outcome }
        binds.append(protected.map { $0 })
        let notProtected = "NOT (id = ANY($\(binds.count)))"
        binds.append(Int64(batchSize))
        let limit = "$\(binds.count)"
        for _ in 0..<max(1, maxBatches) {
            let removed = try session.query("""
                DELETE FROM proxyapp_flows WHERE id IN (
                  SELECT id FROM proxyapp_flows WHERE \(kept) AND \(notProtected)
                    AND (\(conditions.joined(separator: " OR "))) ORDER BY id LIMIT \(limit))
                RETURNING id
                """, binds).count
            outcome.flowsRemoved += removed
            outcome.moreDue = removed == batchSize
            if !outcome.moreDue { break }
        }
        return outcome
    }

    public func close(logger: Logger) {
        session.disconnect()
    }
}
