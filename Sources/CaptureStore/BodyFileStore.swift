import Foundation
import ProxyModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Captured bodies of `threshold` bytes or more, kept as files beside the database instead of
/// BLOBs inside it.
///
/// Writing a 10 MiB body into SQLite cost the writer 50–70 ms of CPU (page by page into the
/// write-ahead log, then again into the file at the checkpoint): five times what relaying it
/// cost, so large downloads were bound by the capture, and the bodies waiting for it held
/// memory. One file write is a few milliseconds. The database keeps every other column, so
/// listing, filters and the TUI read it as before; reading a flow reads its files.
///
/// Layout: `<database path>-bodies/ab/abcd…`. The name is the body's XXH3-128 in hex
/// (`BodyContentHasher`), so the same bytes captured twice are stored once: a body shares a file
/// only after a byte-for-byte comparison (`BodyFileComparison`), and one whose name is taken by
/// other bytes takes the name with a suffix (`candidates(for:)`). A row names its files in the
/// `*_body_file` columns and leaves the BLOB column NULL.
///
/// Consistency across processes: files are written, and removed, only inside a write
/// transaction of the database, whose lock every writer (the proxy, `proxyapp` commands, a TUI
/// clearing the list) takes in turn. A writer that finds a file already there uses it; one that
/// deletes the last row naming a file removes the file before its commit. A crash can leave a
/// file no row names (cleaned by the next clear of the capture), never a row without its file.
public struct BodyFileStore: Sendable {
    /// Bodies from this many captured bytes on go to files.
    public static let threshold = 256 << 10

    /// The directory holding the files, created on the first write.
    public let directory: String
    /// The files stored last by the start of their bodies, for spools receiving one again.
    let twins = BodyTwinIndex()

    /// The store beside the database file at `databasePath`.
    public init(databasePath: String) {
        directory = databasePath + "-bodies"
    }

    /// True when `body` is stored as a file rather than in its BLOB column.
    public static func storesExternally(_ body: CapturedBody) -> Bool {
        body.spool != nil || body.storedCount >= threshold
    }

    /// Where bodies being captured are written before they are named (`BodyFileSpool`).
    var spoolDirectory: String { directory + "/spool" }

    /// A spool for one body of a live capture (`ProxyConfiguration.bodySpool`).
    public func makeSpool() -> BodyFileSpool {
        BodyFileSpool(store: self)
    }

    /// Creates the store's folder and its spool folder; false when they cannot be made.
    func makeSpoolDirectory() -> Bool {
        (try? makeDirectory(directory)) != nil && (try? makeDirectory(spoolDirectory)) != nil
    }

    /// Gives the spooled file at `temporary` its name in the store (`place`): moved there, or
    /// removed when that name holds the same bytes already. Nil when it could not be moved. Call
    /// inside a write transaction.
    func adopt(_ temporary: String, as name: String) -> String? {
        defer { unlink(temporary) }  // gone already once moved
        return try? place(name, holdsSame: { BodyFileComparison.file($0, sameAs: temporary) }) { path in
            try makeDirectory((path as NSString).deletingLastPathComponent)
            guard rename(temporary, path) == 0 else { throw BodyFileError.cannotWrite(path: path, errno: errno) }
        }
    }

    /// The first of `candidates(for: name)` that holds the same bytes (`holdsSame`), or is free
    /// and then filled by `create`. Throws what `create` throws, and when every candidate holds
    /// other bytes.
    private func place(_ name: String, holdsSame: (String) -> Bool, create: (String) throws -> Void) throws -> String {
        for candidate in Self.candidates(for: name) {
            let path = self.path(of: candidate)
            if access(path, F_OK) == 0 {
                if holdsSame(path) { return candidate }
                continue
            }
            try create(path)
            return candidate
        }
        throw BodyFileError.cannotWrite(path: path(of: name), errno: EEXIST)
    }

    /// The names a body hashed to `name` may take, in the order they are tried: the name itself,
    /// then its hash alone and with `-1` … `-7`, then one unique to this call. Only bodies made
    /// to collide (or an astronomically rare accident) get past the first. `name` may carry a
    /// suffix already (a spool that matched a stored twin takes the twin's name): the suffixes
    /// tried replace it, so every candidate is a valid name.
    static func candidates(for name: String) -> [String] {
        let base = name.count == 64 ? name : String(name.prefix(32))
        var names = [name]
        if base != name { names.append(base) }
        names += (1...7).map { "\(base)-\($0)" }.filter { $0 != name }
        return names + ["\(base)-" + String(UInt64.random(in: .min ... .max), radix: 16)]
    }

    /// Removes spool files left by processes that are no longer running (a proxy that was
    /// killed mid-download), also those of an earlier process that had this one's pid. Files of
    /// running processes, and this process's own, are theirs.
    public func removeAbandonedSpools() {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory) else { return }
        for file in files where file.hasSuffix(".partial") {
            guard let dash = file.firstIndex(of: "-"), let pid = Int32(file[..<dash]) else { continue }
            if pid == getpid() {
                if !file.hasPrefix(BodyFileSpool.namePrefix) { unlink(spoolDirectory + "/" + file) }
                continue
            }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            unlink(spoolDirectory + "/" + file)
        }
    }

    /// Writes the captured bytes of `body` unless a file with the same bytes exists under its name
    /// (`place`), and returns the name the row keeps. Call inside a write transaction.
    func write(_ body: CapturedBody) throws -> String {
        let hasher = BodyContentHasher()
        for part in body.parts {
            hasher.update(part)
        }
        try makeDirectory(directory)
        return try place(hasher.name(), holdsSame: { BodyFileComparison.file($0, holds: body.parts) }) { path in
            try write(body.parts, to: path)
        }
    }

    /// Writes `parts` to a new file at `path`, under a temporary name first and renamed: a file
    /// under its final name is whole.
    private func write(_ parts: [Data], to path: String) throws {
        try makeDirectory((path as NSString).deletingLastPathComponent)
        let temporary = path + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BodyFileError.cannotWrite(path: temporary, errno: errno) }
        defer { close(descriptor) }
        for part in parts {
            if let code = Self.writeAll(part, to: descriptor) {
                unlink(temporary)
                throw BodyFileError.cannotWrite(path: temporary, errno: code)
            }
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw BodyFileError.cannotWrite(path: path, errno: code)
        }
    }

    /// The bytes of the file `name`, or nil when the name is not one this store makes (a row
    /// edited by hand cannot point it at another file) or the file is gone.
    func read(_ name: String) -> Data? {
        guard Self.isValidName(name) else { return nil }
        return FileManager.default.contents(atPath: path(of: name))
    }

    /// Removes the file `name` (nothing when it is not there). Call inside a write transaction,
    /// once no row names it.
    func remove(_ name: String) {
        guard Self.isValidName(name) else { return }
        unlink(path(of: name))
    }

    /// Removes every file of the store, for a capture whose flows were all deleted. Call
    /// inside a write transaction.
    func removeAll() {
        guard let shards = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for shard in shards where shard.count == 2 {
            let shardPath = directory + "/" + shard
            for file in (try? FileManager.default.contentsOfDirectory(atPath: shardPath)) ?? [] {
                unlink(shardPath + "/" + file)
            }
            rmdir(shardPath)
        }
    }

    /// Writes every byte of `data` to `descriptor` (again after a signal); the errno of a
    /// failed write, nil when all went.
    static func writeAll(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { writeAll($0, to: descriptor) }
    }

    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Bytes the stored files take (spool files included), read from the file system. A spool
    /// file that is a link to a stored file (`BodyFileSpool` checking a twin) takes nothing more.
    func totalSize() -> Int64 {
        var total: Int64 = 0
        var status = stat()
        for folder in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let folderPath = directory + "/" + folder
            for file in (try? FileManager.default.contentsOfDirectory(atPath: folderPath)) ?? []
            where lstat(folderPath + "/" + file, &status) == 0 {
                if folderPath == spoolDirectory && status.st_nlink > 1 { continue }
                total += Int64(status.st_size)
            }
        }
        return total
    }

    func path(of name: String) -> String {
        directory + "/" + name.prefix(2) + "/" + name
    }

    /// A name this store makes, exactly: 32 lower-case hex digits (`BodyContentHasher`), alone or
    /// followed by `-` and 1–16 more (`candidates(for:)`); or 64 (SHA-256, the names of stores
    /// written before). Nothing else reaches the file system: no `/`, no `..`.
    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func hex(_ part: ArraySlice<UInt8>) -> Bool {
            part.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }
        if bytes.count == 64 { return hex(bytes[...]) }
        guard bytes.count >= 32, hex(bytes[..<32]) else { return false }
        if bytes.count == 32 { return true }
        return bytes[32] == UInt8(ascii: "-") && (34...49).contains(bytes.count) && hex(bytes[33...])
    }

    private func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw BodyFileError.cannotWrite(path: path, errno: errno)
        }
    }
}

extension BodyFileStore {
    /// The record's flow with the bodies it keeps in files read back. A file that is gone (removed
    /// by hand) leaves its body empty and marked truncated, with its size still known.
    func flow(from record: FlowRecord) -> Flow {
        var flow = record.flow
        let names = record.bodyFiles
        guard !names.isEmpty else { return flow }
        func restore(_ body: inout CapturedBody, _ name: String?) {
            guard let name else { return }
            if let bytes = read(name) {
                body.bytes = bytes
            } else {
                body.bytes = Data()
                body.truncated = true
            }
        }
        restore(&flow.requestBody, names.request)
        restore(&flow.responseBody, names.response)
        if var body = flow.forwardedRequest?.body {
            restore(&body, names.forwardedRequest)
            flow.forwardedRequest?.body = body
        }
        if var body = flow.originResponse?.body {
            restore(&body, names.originResponse)
            flow.originResponse?.body = body
        }
        return flow
    }
}

/// A body file that could not be written, in words. The insert then keeps that body in its BLOB
/// column (`FlowInsertStatement`), so nothing captured is lost.
enum BodyFileError: Error, CustomStringConvertible {
    case cannotWrite(path: String, errno: Int32)

    var description: String {
        switch self {
        case .cannotWrite(let path, let code):
            return "cannot write the captured body file \(path): \(String(cString: strerror(code)))"
        }
    }
}
