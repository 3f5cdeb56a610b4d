import CSQLite
import GRDB

/// Preparing statements and binding text through SQLite's C API, for the capture's hot inserts
/// (`FlowInsertStatement`, `FullTextInsertStatement`): one place for the conventions both need.
enum SQLiteBinding {
    static func prepare(_ sql: String, on connection: OpaquePointer) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, connection, sql: sql) }
        return statement
    }

    /// Binds `text` (copied), NULL for nil. An empty string stays empty, not NULL.
    static func bind(text: String?, to statement: OpaquePointer, at index: Int32) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    _ = sqlite3_bind_text(statement, index, $0, Int32(bytes.count), transient)
                }
            } else {
                // An empty buffer may have no address, which SQLite would store as NULL.
                sqlite3_bind_text(statement, index, "", 0, transient)
            }
        }
    }

    /// SQLite's error for `code` on `connection`, as GRDB reports it.
    static func error(_ code: Int32, _ connection: OpaquePointer, sql: String? = nil) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    /// SQLITE_TRANSIENT (a C macro Swift cannot import): SQLite copies the bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
