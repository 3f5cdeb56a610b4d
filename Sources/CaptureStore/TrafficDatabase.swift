import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One open capture database file: a GRDB `DatabasePool` in WAL mode with the schema migrated.
///
/// It exists so that exactly one place decides how the file is opened (WAL, busy timeout,
/// migrations, read-only checks). Open each file once per process and share the instance; all
/// SQL goes through `TrafficRepository`.
///
/// Durability: WAL with `synchronous=NORMAL` (GRDB's setting for pools, checked by the tests).
/// A committed transaction survives the proxy being killed (`kill -9`): it is in the WAL file
/// and is recovered by the next opener, and the file is never corrupted. A power loss or kernel
/// crash may lose the last transactions committed before it, never the file's integrity.
///
/// Pages: a new capture has 8 KiB pages (`newCapturePageSize`); one made earlier keeps its 4 KiB.
///
/// Several processes: the proxy opens the file read-write; `proxyapp flows` and the TUI open it
/// with `openReadOnly` while the proxy writes. WAL readers never block the writer, and the
/// writer waits up to `busyTimeout` on the rare locks (recovery, checkpoint) instead of failing.
/// A read-only opener needs the `-wal`/`-shm` files to exist or its directory to be writable
/// (SQLite creates them); a user's own capture directory always is.
public final class TrafficDatabase: Sendable {
    /// How long a connection waits on a lock held by another connection or process.
    public static let busyTimeout: TimeInterval = 5

    /// The page size of a new capture. A flow's row is about 2 KiB, so 4 KiB pages (SQLite's
    /// default) hold two: every page the capture writer commits costs two `pwrite`s into the
    /// write-ahead log, and a `pread` and a `pwrite` again when it is checkpointed. With 8 KiB
    /// pages the writer made 0.94 `pwrite`s and 0.38 `pread`s per flow instead of 2.13 and 0.83
    /// (scripts/bench `syscalls`), and the proxy used 0.93 (plain) and 0.98 (HTTPS) of the CPU
    /// per keep-alive request (bench `baseline`, 11 paired rounds). SQLite sets a page size only
    /// before a file's first write: existing captures keep theirs.
    public static let newCapturePageSize = 8192

    /// The path the database was opened at.
    public let path: String
    /// True for databases opened with `openReadOnly`.
    public let isReadOnly: Bool
    /// The large bodies of this capture, in files beside it.
    public let bodyFiles: BodyFileStore

    let pool: DatabasePool
    /// Device and inode of the file when it was opened, to notice deletion or replacement.
    private let fileIdentity: FileIdentity?

    /// Opens the capture database at `path` read-write, creating the file if needed (mode 0600:
    /// it holds credentials and decrypted bodies; SQLite gives the `-wal` and `-shm` files it
    /// creates, now or after a checkpoint removed them, the main file's mode), and runs the
    /// migrations. The parent directory must exist. An existing file keeps its mode.
    ///
    /// - Throws: `CaptureStoreError.schemaTooNew` for a file written by a newer store,
    ///   `CaptureStoreError.notACaptureDatabase` for a file that is not SQLite, or GRDB's
    ///   `DatabaseError` (for example when the directory does not exist).
    public init(path: String) throws {
        var configuration = Self.baseConfiguration()
        configuration.label = "proxyapp.capture"
        Self.createPrivateFile(path)
        let pool = try Self.mappingNotADatabase(path: path) {
            try DatabasePool(path: path, configuration: configuration)
        }
        try Self.mappingNotADatabase(path: path) {
            // A new capture gives the pages of removed flows back to the file system
            // (`RetentionPolicy`). SQLite takes the setting only before the first table, and in
            // WAL mode (set when the pool opened the file) only with a VACUUM: instant when empty.
            try pool.writeWithoutTransaction { db in
                if try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 {
                    try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                    try db.execute(sql: "VACUUM")
                }
            }
            if try pool.read(TrafficMigrations.migrator.hasBeenSuperseded) {
                throw CaptureStoreError.schemaTooNew(path: path)
            }
            try TrafficMigrations.migrator.migrate(pool)
        }
        // The reader that asked `hasBeenSuperseded` still holds the schema from before the
        // migration: its next statement would be compiled against it, and GRDB keeps that
        // statement's column names even after SQLite recompiles it (a new column "not found").
        pool.invalidateReadOnlyConnections()
        self.pool = pool
        self.path = path
        self.bodyFiles = BodyFileStore(databasePath: path)
        self.isReadOnly = false
        self.fileIdentity = FileIdentity(path: path)
    }

    private init(readOnlyPool pool: DatabasePool, path: String) {
        self.pool = pool
        self.path = path
        self.bodyFiles = BodyFileStore(databasePath: path)
        self.isReadOnly = true
        self.fileIdentity = FileIdentity(path: path)
    }

    /// Opens an existing capture database for reading only, for a process other than the proxy
    /// (`proxyapp flows`, the TUI). Never creates, migrates or writes the file.
    ///
    /// - Throws: `CaptureStoreError.databaseNotFound` when no file exists at `path`,
    ///   `.notACaptureDatabase` when it holds no complete capture schema, `.schemaTooNew` when a
    ///   newer store wrote it, `.schemaTooOld` when an older one did (the proxy upgrades it).
    public static func openReadOnly(path: String) throws -> TrafficDatabase {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
              !isDirectory.boolValue
        else {
            throw CaptureStoreError.databaseNotFound(path: path)
        }
        var configuration = baseConfiguration()
        configuration.readonly = true
        configuration.label = "proxyapp.capture.readonly"
        return try mappingNotADatabase(path: path) {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.read { db in
                let migrator = TrafficMigrations.migrator
                if try migrator.hasBeenSuperseded(db) {
                    throw CaptureStoreError.schemaTooNew(path: path)
                }
                if try !migrator.hasCompletedMigrations(db) {
                    let applied = try migrator.appliedIdentifiers(db)
                    if let first = migrator.migrations.first, applied.contains(first) {
                        throw CaptureStoreError.schemaTooOld(path: path)
                    }
                    throw CaptureStoreError.notACaptureDatabase(path: path)
                }
            }
            return TrafficDatabase(readOnlyPool: pool, path: path)
        }
    }

    /// False once the file at `path` is gone or is another file than the one opened. SQLite keeps
    /// writing into an unlinked file without any error, so the writer asks before each batch.
    public var fileIsInPlace: Bool {
        guard let fileIdentity else { return false }
        return FileIdentity(path: path) == fileIdentity
    }

    private static func baseConfiguration() -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = false  // no foreign keys in the schema
        configuration.prepareDatabase { db in
            // The capture writer checkpoints itself, between batches (`TrafficRepository
            // .checkpoint`): an automatic checkpoint would run inside a commit, while the batch
            // and its bodies (up to 16 MiB each) are still held in memory.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            // Before the pool's first write (switching to WAL) fixes the page size of a new
            // file; a no-op on any file that has pages already.
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA page_size = \(newCapturePageSize)")
            }
            // The filter language's regex tests, for the SQL half of `FlowQuery`.
            db.add(function: RegexSQLFunction.function)
            db.add(function: RegexSQLFunction.rulesFunction)
        }
        return configuration
    }

    /// Creates an empty file at `path`, mode 0600 whatever the umask, unless something is there
    /// already (SQLite reads an empty file as an empty database). Failures are left for SQLite
    /// to report when it opens the path.
    private static func createPrivateFile(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        _ = fchmod(descriptor, 0o600)
        close(descriptor)
    }

    /// Runs `body`, turning SQLite's "file is not a database" into `.notACaptureDatabase`.
    private static func mappingNotADatabase<T>(path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw CaptureStoreError.notACaptureDatabase(path: path)
        }
    }
}

/// Device and inode numbers of a file: equal only for the same file, even across renames.
private struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
