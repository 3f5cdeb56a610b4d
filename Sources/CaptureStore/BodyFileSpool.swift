import Foundation
import ProxyModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One large body written to a temporary file while its exchange runs, then claimed by the
/// capture writer, which gives it its content name in the `BodyFileStore`.
///
/// Blocks are written and hashed on one serial queue shared by every spool, never on an event
/// loop. The blocks waiting for that queue are bounded across all spools (`maxPendingBytes`):
/// past the bound a spool refuses further blocks and the body is kept as far as it got, marked
/// truncated, rather than letting downloads outrun the disk in memory.
///
/// A body that starts as one stored not long ago (`BodyTwinIndex`, after its first 64 KiB) is
/// checked against that file instead of written: the spool file becomes a hard link to it, each
/// block is compared with it, and the claim names the same file without hashing or reading the
/// body again. At the first byte that differs (or a length that does), the bytes taken so far are
/// copied from the twin into a file of the spool's own and it writes from then on.
///
/// Files live in `<store>/spool/<pid>-<token>-<n>.partial` (and `…-<n>-twin.partial` for a
/// moment), the token drawn once per process: a later process given the same pid (pid 1 in a
/// container) never takes an earlier one's file, which may be a link to a stored body. Files are
/// created with `O_EXCL` for the same reason. A spool never claimed (its flow was dropped)
/// removes its file when released; files left by a process that died are removed by the next
/// proxy that opens the store (`BodyFileStore.removeAbandonedSpools()`).
public final class BodyFileSpool: BodySpool, @unchecked Sendable {
    /// Bytes handed to spools and not yet written, across all of them.
    static let maxPendingBytes = 64 << 20

    /// Not `.utility`: libdispatch runs that at nice 2 on Linux, and a spool that lags the relay
    /// keeps its blocks (over plain HTTP, the receive buffers themselves) longer, so the event
    /// loop reads into fresh memory instead of buffers just freed: 10 MiB downloads were 3-12 %
    /// slower and up to 6.8 MiB waited for the spool instead of 4.
    static let queue = DispatchQueue(label: "proxyapp.capture.body-spool", qos: .default)
    private static let pendingLock = NSLock()
    private nonisolated(unsafe) static var pendingBytes = 0
    /// What every spool file of this process starts with: its pid and a token of its own.
    static let namePrefix = "\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))-"
    private static let counterLock = NSLock()
    private nonisolated(unsafe) static var nextNumber = 0

    private let store: BodyFileStore
    let temporaryPath: String
    /// Where a stored twin is linked before it replaces the spool file (`startVerifying`).
    private let linkPath: String
    /// Every block handed to the queue enters; its write leaves.
    private let writes = DispatchGroup()

    // Touched only on `queue`, or after `writes` is waited on.
    private var hasher = BodyContentHasher()
    /// Bytes of the body taken so far: written to the file, or found in the twin.
    private var writtenCount = 0
    private var failed = false
    private var digest: String?
    /// The body's first bytes, gathered until there are `BodyTwinIndex.prefixSize`.
    private var prefix = Data()
    private var prefixKey: UInt64?
    /// While set, the spool file is a link to the stored file of this name, which has held the
    /// body's bytes so far: blocks are compared with it, not written.
    private var twin: String?
    /// Bytes found in a twin rather than written (what the check saved; for tests).
    private var takenFromTwin = 0

    // Guarded by `lock`.
    private let lock = NSLock()
    private var refusing = false
    private var finished = false

    init(store: BodyFileStore) {
        self.store = store
        let number = Self.counterLock.withLock {
            Self.nextNumber += 1
            return Self.nextNumber
        }
        temporaryPath = store.spoolDirectory + "/\(Self.namePrefix)\(number).partial"
        linkPath = store.spoolDirectory + "/\(Self.namePrefix)\(number)-twin.partial"
    }

    deinit {
        unlink(temporaryPath)  // gone already when claimed
        unlink(linkPath)
    }

    public func append(_ block: Data) -> Bool {
        let accepted = lock.withLock { () -> Bool in
            guard !refusing, !finished else { return false }
            let room = Self.pendingLock.withLock { () -> Bool in
                guard Self.pendingBytes + block.count <= Self.maxPendingBytes else { return false }
                Self.pendingBytes += block.count
                return true
            }
            if !room { refusing = true }
            return room
        }
        guard accepted else { return false }
        writes.enter()
        Self.queue.async { [self] in
            take(block)
            Self.pendingLock.withLock { Self.pendingBytes -= block.count }
            writes.leave()
        }
        return true
    }

    public func finish() {
        let first = lock.withLock { () -> Bool in
            defer { finished = true }
            return !finished
        }
        guard first else { return }
        writes.enter()
        Self.queue.async { [self] in
            if let twin, !failed {
                if SpoolFile.size(of: temporaryPath) == writtenCount {
                    digest = twin
                } else {
                    stopVerifying()  // the stored body goes on: this one is its start
                }
            }
            if twin == nil, !failed, writtenCount > 0 {
                let name = hasher.name()
                digest = name
                if let prefixKey { store.twins.record(name, file: temporaryPath, for: prefixKey) }
            }
            writes.leave()
        }
    }

    public func contents() -> Data {
        contents(upTo: .max)
    }

    /// Read on the queue, after the blocks handed so far: a block arriving meanwhile cannot
    /// replace the file (`stopVerifying`) under the read, which takes only the body's bytes.
    public func contents(upTo limit: Int) -> Data {
        writes.wait()
        return Self.queue.sync {
            guard !failed, writtenCount > 0, let file = FileHandle(forReadingAtPath: temporaryPath) else { return Data() }
            defer { try? file.close() }
            return (try? file.read(upToCount: min(limit, writtenCount))) ?? Data()
        }
    }

    /// Bytes of the body found in a stored twin rather than written, once the blocks handed so
    /// far are taken.
    func bytesTakenFromTwin() -> Int {
        writes.wait()
        return Self.queue.sync { takenFromTwin }
    }

    /// Moves the finished file to its content name in the store (`BodyFileStore.adopt`) and
    /// returns the name; nil when the body could not be written (the caller keeps it as empty
    /// and truncated). Call once, inside the writer's transaction, after `finish()`.
    func claim() -> String? {
        finish()
        writes.wait()
        guard let digest, let name = store.adopt(temporaryPath, as: digest) else { return nil }
        if let prefixKey { store.twins.record(name, for: prefixKey) }
        return name
    }

    /// Runs on `queue`: checks `block` against the twin while there is one, writes it otherwise.
    private func take(_ block: Data) {
        guard !failed else { return }
        if twin != nil {
            if block.withUnsafeBytes({ SpoolFile.bytes(at: writtenCount, of: temporaryPath, match: $0) }) {
                writtenCount += block.count
                takenFromTwin += block.count
                return
            }
            stopVerifying()
            guard !failed else { return }
        }
        write(block)
        guard !failed, prefixKey == nil else { return }
        prefix.append(block.prefix(BodyTwinIndex.prefixSize - prefix.count))
        if prefix.count == BodyTwinIndex.prefixSize {
            let key = prefix.withUnsafeBytes { BodyTwinIndex.key($0) }
            prefixKey = key
            prefix = Data()
            startVerifying(key)
        }
    }

    /// Runs on `queue`. The file is opened for each block and closed after it, so spools hold no
    /// descriptor between blocks: a thousand downloads at once cost the proxy no connections.
    private func write(_ block: Data) {
        if writtenCount == 0, !store.makeSpoolDirectory() {
            failed = true
            return
        }
        let descriptor = writtenCount == 0
            ? SpoolFile.create(temporaryPath, flags: O_WRONLY | O_APPEND)
            : open(temporaryPath, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            failed = true
            return
        }
        defer { close(descriptor) }
        guard BodyFileStore.writeAll(block, to: descriptor) == nil else {
            failed = true
            return
        }
        hasher.update(block)
        writtenCount += block.count
    }

    /// Runs on `queue` once the body's start is known: when a stored body began the same way
    /// (`BodyTwinIndex`) and its file starts with the bytes written so far, the spool file
    /// becomes a link to that file. A link, not a name: the stored file may be removed meanwhile
    /// (its last flow deleted), and the claim then puts the bytes back under their name.
    private func startVerifying(_ key: UInt64) {
        guard let found = store.twins.twin(for: key), BodyFileStore.isValidName(found.name) else { return }
        let name = found.name, stored = store.path(of: name)
        unlink(linkPath)
        // Flags 0: a symbolic link planted under the name is linked as itself, then refused by
        // the comparison (`O_NOFOLLOW`), never followed. A spool's file renamed by its claim
        // meanwhile is found under its stored name.
        guard linkat(AT_FDCWD, found.file ?? stored, AT_FDCWD, linkPath, 0) == 0
                || (found.file != nil && linkat(AT_FDCWD, stored, AT_FDCWD, linkPath, 0) == 0) else {
            if errno == ENOENT { store.twins.forget(key, naming: name) }
            return
        }
        guard SpoolFile.file(linkPath, startsWithFile: temporaryPath, count: writtenCount),
              rename(linkPath, temporaryPath) == 0 else {
            unlink(linkPath)
            return
        }
        twin = name
    }

    /// Runs on `queue` when the body parts from its twin: the bytes taken so far are copied from
    /// the twin into a file of the spool's own, hashed, and the spool writes from then on. The
    /// copy runs at memory speed in 1 MiB steps (a few ms per 10 MiB) but holds the queue while
    /// it runs: a body that parts from a huge twin late delays the other spools' writes.
    private func stopVerifying() {
        twin = nil
        guard rename(temporaryPath, linkPath) == 0,
              let copied = SpoolFile.copy(count: writtenCount, from: linkPath, to: temporaryPath) else {
            failed = true
            unlink(linkPath)
            return
        }
        unlink(linkPath)
        hasher = copied
    }
}
