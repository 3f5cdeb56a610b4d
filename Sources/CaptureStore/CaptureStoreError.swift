/// Errors the capture store raises itself, on top of GRDB's `DatabaseError`.
///
/// They exist so the CLI and the TUI can tell a user something actionable ("no capture database at
/// this path", "written by a newer proxyapp") instead of SQLite's "unable to open database file".
public enum CaptureStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `openReadOnly` was pointed at a path where no file exists.
    case databaseNotFound(path: String)
    /// The file is an SQLite database (or not even that) without a complete capture schema.
    case notACaptureDatabase(path: String)
    /// The file was migrated by a newer version of the store, with migrations this build lacks.
    case schemaTooNew(path: String)
    /// A read-only opener found a capture database an older store wrote, without the newer
    /// migrations (only the proxy, which opens it read-write, upgrades it).
    case schemaTooOld(path: String)
    /// A stored row holds a value the store never writes (a header list that is not a JSON
    /// array of `[name, value]` pairs, an unknown flow kind).
    case malformedRow(String)
    /// The database file was deleted or replaced while the writer had it open: SQLite would
    /// silently keep writing into the unlinked file, so the writer refuses to.
    case databaseFileGone(path: String)

    public var description: String {
        switch self {
        case .databaseNotFound(let path):
            return "no capture database at \(path)"
        case .notACaptureDatabase(let path):
            return "\(path) is not a proxyapp capture database (or its schema is incomplete)"
        case .schemaTooNew(let path):
            return "\(path) was written by a newer proxyapp; upgrade to read it"
        case .schemaTooOld(let path):
            return "\(path) was written by an older proxyapp; start `proxyapp run` on it once to upgrade it"
        case .malformedRow(let detail):
            return "malformed capture row: \(detail)"
        case .databaseFileGone(let path):
            return "the capture database \(path) was deleted or replaced while open"
        }
    }
}
