import Foundation
import PostgresNIO

/// How a reader tails the shared capture by id without missing a flow, while proxies write
/// batches in parallel.
///
/// Ids come from one sequence, but batches commit in any order: proxy A may take ids 100–611,
/// proxy B 612–700 and commit first. A reader that saw 700 and moved on would never see A's
/// flows. So each writer announces, before it takes ids, that ids above the sequence's current
/// value may be on their way: a shared, transaction-scoped advisory lock whose key encodes the
/// next id the sequence will give (`announce`). The lock ends with the transaction, committed or not, and with
/// the session if the writer dies. A reader tails up to the *watermark*: the highest committed
/// id, but below every announced one (`watermarkSQL`).
///
/// Why it holds: the watermark statement reads `max(id)` from its snapshot first, then the locks
/// (live). A writer whose ids are at or below that `max` took them before the snapshot, so it
/// announced before too, and either committed (its flows are in the next read) or still holds
/// its lock (the watermark stays below its ids). A writer announcing later takes ids above the
/// `max`. Writers never wait for each other; the cost is one statement per batch. (An earlier
/// design serialized the batches under one exclusive lock: in the bench's `shared` phase it cut
/// the flows stored per second by a quarter.)
enum PostgresTailWatermark {
    /// The high bits every announcement key carries, so they are told apart from other advisory
    /// locks in the database ("prx" then 40 bits of flow id).
    static let namespace: Int64 = 0x7072_7800_0000_0000
    static let idBits: Int64 = (1 << 40) - 1

    /// How long the server lets a batch sit idle in its transaction (announced, so holding every
    /// reader's watermark below its ids) before it ends the session: a writer that froze
    /// between statements stalls the tail for at most this long.
    static let idleInBatchTimeout = "10s"

    /// The writer's half: once per transaction, before its first `nextval`.
    static func announce(_ session: PostgresSession) throws {
        var binds = PostgresBindings()
        binds.append(namespace)
        binds.append(idBits)
        binds.append(idleInBatchTimeout)
        try session.query("""
            SELECT pg_advisory_xact_lock_shared($1 | ((CASE WHEN is_called THEN last_value + 1 ELSE last_value END) & $2)),
                   set_config('idle_in_transaction_session_timeout', $3, true)
            FROM proxyapp_flows_id_seq
            """, binds)
    }

    /// The reader's half: one row, the id up to which every flow that will ever be visible is.
    /// Advisory locks show in `pg_locks` as two 32-bit halves (`classid`, `objid`; `objsubid` 1
    /// for a 64-bit key), per database.
    static let watermarkSQL = """
        SELECT least(
          (SELECT coalesce(max(id), 0) FROM proxyapp_flows),
          (SELECT min(((classid::bigint << 32) | objid::bigint) & \(idBits)) - 1 FROM pg_locks
           WHERE locktype = 'advisory' AND objsubid = 1 AND granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND classid::bigint >> 8 = \(namespace >> 40)))
        """
}
