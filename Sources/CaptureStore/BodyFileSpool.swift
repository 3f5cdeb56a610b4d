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
/// Files live in `<store>/spool/<pid>-<n>.partial`. A spool never claimed (its flow was dropped)
/// removes its file when released; files left by a process that died are removed by the next
/// proxy that opens the store (`BodyFileStore.removeAbandonedSpools()`).
public final class BodyFileSpool: BodySpool, @unchecked Sendable {
    /// Bytes handed to spools and not yet written, across all of them.
    static let maxPendingBytes = 64 << 20

    static let queue = DispatchQueue(label: "proxyapp.capture.body-spool", qos: .utility)
    private static let pendingLock = NSLock()
    private nonisolated(unsafe) static var pendingBytes = 0
    private static let counterLock = NSLock()
    private nonisolated(unsafe) static var nextNumber = 0

    private let store: BodyFileStore
    let temporaryPath: String
    /// Every block handed to the queue enters; its write leaves.
    private let writes = DispatchGroup()

    // Touched only on `queue`, or after `writes` is waited on.
    private let hasher = BodyContentHasher()
    private var writtenCount = 0
    private var failed = false
    private var digest: String?

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
        temporaryPath = store.spoolDirectory + "/\(getpid())-\(number).partial"
    }

    deinit {
        unlink(temporaryPath)  // gone already when claimed
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
            write(block)
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
            if !failed && writtenCount > 0 {
                digest = hasher.name()
            }
            writes.leave()
        }
    }

    public func contents() -> Data {
        writes.wait()
        guard !failed, writtenCount > 0 else { return Data() }
        return FileManager.default.contents(atPath: temporaryPath).map { $0.prefix(writtenCount) } ?? Data()
    }

    public func contents(upTo limit: Int) -> Data {
        writes.wait()
        guard !failed, writtenCount > 0, let file = FileHandle(forReadingAtPath: temporaryPath) else { return Data() }
        defer { try? file.close() }
        return (try? file.read(upToCount: min(limit, writtenCount))) ?? Data()
    }

    /// Moves the finished file to its content name in the store (`BodyFileStore.adopt`) and
    /// returns the name; nil when the body could not be written (the caller keeps it as empty
    /// and truncated). Call once, inside the writer's transaction, after `finish()`.
    func claim() -> String? {
        finish()
        writes.wait()
        guard let digest else { return nil }
        return store.adopt(temporaryPath, as: digest)
    }

    /// Runs on `queue`. The file is opened for each block and closed after it, so spools hold no
    /// descriptor between blocks: a thousand downloads at once cost the proxy no connections.
    private func write(_ block: Data) {
        guard !failed else { return }
        if writtenCount == 0, !store.makeSpoolDirectory() {
            failed = true
            return
        }
        let flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (writtenCount == 0 ? O_CREAT | O_TRUNC : 0)
        let descriptor = open(temporaryPath, flags, 0o600)
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
}
