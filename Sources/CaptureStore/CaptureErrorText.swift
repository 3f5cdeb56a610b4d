import GRDB

/// A capture store failure in words a user can act on: CLI messages, control replies, the TUI's
/// status line and the capture writer's log lines.
///
/// Why it exists: GRDB's `DatabaseError` describes itself with SQLite's own text and the SQL it was
/// running ("SQLite error 8: attempt to write a readonly database - while executing `CREATE TABLE
/// grdb_issue_102 …`"), which says nothing about what to do. This names the cause by SQLite's
/// result code; the caller adds what failed and the fix it knows (another `--data-dir`, …).
/// `CaptureStoreError` already speaks in words and is passed through; any other error keeps its
/// own description.
public enum CaptureErrorText {
    public static func describe(_ error: any Error) -> String {
        if let error = error as? CaptureStoreError { return error.description }
        guard let error = error as? DatabaseError else { return "\(error)" }
        return describe(resultCode: error.resultCode.primaryResultCode)
    }

    /// Whether `error` is the database's own (GRDB's `DatabaseError`), which `describe` words: a
    /// caller that does not import GRDB asks before it prints an error it did not expect.
    public static func isDatabaseError(_ error: any Error) -> Bool {
        error is DatabaseError
    }

    /// The words for an SQLite primary result code.
    static func describe(resultCode code: ResultCode) -> String {
        switch code {
        case .SQLITE_READONLY:
            return "the database file cannot be written (read-only: check its owner and permissions, "
                + "for example after a run with sudo)"
        case .SQLITE_PERM, .SQLITE_AUTH:
            return "permission denied (check the file's owner and permissions)"
        case .SQLITE_CANTOPEN:
            return "the database file cannot be opened (check that its folder exists and is writable)"
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "the database is locked by another process (try again, or stop the other proxy)"
        case .SQLITE_FULL:
            return "the disk is full"
        case .SQLITE_IOERR:
            return "the disk failed a read or write (I/O error)"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return "the capture file is damaged (move it aside to start a new one)"
        case .SQLITE_NOMEM:
            return "out of memory"
        case .SQLITE_TOOBIG:
            return "a value is larger than the database accepts"
        case .SQLITE_INTERRUPT, .SQLITE_ABORT:
            return "the database operation was interrupted"
        default:
            return "the database reported an error (SQLite result code \(code.rawValue))"
        }
    }
}
