import CSQLite

/// The text parameters of one execution of a prepared statement, gathered in one buffer and
/// bound without a copy (`SQLITE_STATIC`) for as long as `run` lasts.
///
/// Bound as `SQLITE_TRANSIENT`, each string was allocated and copied by SQLite and freed at the
/// next bind: with about 25 text columns per flow and five more for its full-text row, that was
/// 7 % of the capture writer's time. The buffer keeps its capacity from row to row, so a row's
/// text costs one copy into it and no allocation.
final class SQLiteTextArena {
    private var bytes: [UInt8] = []
    private var pending: [(index: Int32, offset: Int, count: Int)] = []

    /// Forgets the previous row's text and keeps the buffers.
    func reset() {
        bytes.removeAll(keepingCapacity: true)
        pending.removeAll(keepingCapacity: true)
    }

    /// Keeps `text` for parameter `index`, bound at `run`; nil binds NULL now. An empty string
    /// stays empty, not NULL.
    func add(_ text: String?, at index: Int32, of statement: OpaquePointer) {
        guard let text else {
            sqlite3_bind_null(statement, index)
            return
        }
        let offset = bytes.count
        bytes.append(contentsOf: text.utf8)
        pending.append((index, offset, bytes.count - offset))
    }

    /// Keeps the UTF-8 text `write` appends to the buffer for parameter `index`, bound at
    /// `run`: text built for the row (its header JSON) goes in without a `String` between.
    func add(at index: Int32, of statement: OpaquePointer, writing write: (inout [UInt8]) -> Void) {
        let offset = bytes.count
        write(&bytes)
        pending.append((index, offset, bytes.count - offset))
    }

    /// Binds the text kept since `reset` to `statement` and runs `body`, which must step the
    /// statement, reset it and clear its bindings: the bytes are only valid until it returns.
    func run<Result>(binding statement: OpaquePointer, _ body: () throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBufferPointer { buffer in
            for text in pending {
                if let base = buffer.baseAddress, text.count > 0 {
                    (base + text.offset).withMemoryRebound(to: CChar.self, capacity: text.count) {
                        _ = sqlite3_bind_text(statement, text.index, $0, Int32(text.count), nil)  // SQLITE_STATIC
                    }
                } else {
                    // No bytes: a copy costs nothing, and an empty buffer may have no address,
                    // which SQLite would store as NULL.
                    SQLiteBinding.bind(text: "", to: statement, at: text.index)
                }
            }
            return try body()
        }
    }
}
