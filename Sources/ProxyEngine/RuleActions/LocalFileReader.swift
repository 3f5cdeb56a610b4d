import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A map-local file, opened and read in chunks on a thread pool, never on an event loop.
///
/// One descriptor, read with `pread` at explicit offsets; `close()` is idempotent and the
/// owner calls it on every way out (end of response, client gone). The close itself runs on
/// the pool too, under the lock that keeps it apart from a read still running there, so the
/// event loop never waits on a slow disk. Files are opened non-blocking (a FIFO named in a
/// map-local directory must not hold a pool thread) and must be regular files.
///
/// Work queued for a client that has gone never runs: the owner's `WorkCancellation` (raised
/// when the client goes, and by `close()`) is checked before the open and before each read.
final class LocalFileReader: @unchecked Sendable {
    /// Why the file cannot be served, in words for a 404 body and the flow's note.
    struct OpenError: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    let size: Int64
    private let descriptor: NIOLockedValueBox<Int32>
    private let work: any BlockingWork
    private let eventLoop: any EventLoop
    private let cancellation: WorkCancellation
    /// Set by the first `close()`: later calls queue no second close.
    private let closeRequested = NIOLockedValueBox(false)

    private init(path: String, descriptor: Int32, size: Int64, work: any BlockingWork, eventLoop: any EventLoop,
                 cancellation: WorkCancellation) {
        self.path = path
        self.descriptor = NIOLockedValueBox(descriptor)
        self.size = size
        self.work = work
        self.eventLoop = eventLoop
        self.cancellation = cancellation
    }

    /// Opens `path` (a directory serves its `index.html`) on `pool`, unless `cancellation` is
    /// raised before the pool gets to it (then it fails with `WorkCancellation.Cancelled`).
    static func opening(path: String, on work: any BlockingWork, eventLoop: any EventLoop,
                        cancellation: WorkCancellation) -> EventLoopFuture<LocalFileReader> {
        work.run(on: eventLoop, unless: cancellation) {
            let open = { (path: String) in
                try openNow(path, work: work, eventLoop: eventLoop, cancellation: cancellation)
            }
            do {
                return try open(path)
            } catch let error as OpenError where error.description.hasSuffix("is a directory") {
                return try open(path.hasSuffix("/") ? path + "index.html" : path + "/index.html")
            }
        }
    }

    private static func openNow(_ path: String, work: any BlockingWork, eventLoop: any EventLoop,
                                cancellation: WorkCancellation) throws -> LocalFileReader {
        let descriptor = openForReading(path)
        guard descriptor >= 0 else { throw OpenError(description: message(errno, path)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            closeDescriptor(descriptor)
            throw OpenError(description: message(code, path))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            closeDescriptor(descriptor)
            throw OpenError(description: "\(path) is a directory")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            closeDescriptor(descriptor)
            throw OpenError(description: "\(path) is not a regular file")
        }
        return LocalFileReader(path: path, descriptor: descriptor, size: Int64(info.st_size), work: work,
                               eventLoop: eventLoop, cancellation: cancellation)
    }

    private static func message(_ code: Int32, _ path: String) -> String {
        switch code {
        case ENOENT, ENOTDIR: return "no file at \(path)"
        case EACCES: return "cannot read \(path): permission denied"
        case EISDIR: return "\(path) is a directory"
        default: return "cannot open \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Up to `count` bytes from `offset`; fewer at the end of the file (or if it shrank). Fails
    /// with `WorkCancellation.Cancelled`, reading nothing, once the reader was closed or its
    /// client went away.
    func read(offset: Int64, count: Int, allocator: ByteBufferAllocator, on work: any BlockingWork,
              eventLoop: any EventLoop) -> EventLoopFuture<ByteBuffer> {
        work.run(on: eventLoop, unless: cancellation) {
            var buffer = allocator.buffer(capacity: count)
            let read = self.descriptor.withLockedValue { descriptor in
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    guard descriptor >= 0 else { return 0 }
                    let result = pread(descriptor, pointer.baseAddress, count, off_t(offset))
                    return result > 0 ? result : 0
                }
            }
            if read == 0 && count > 0 {
                throw OpenError(description: "\(self.path) ended early (changed while being sent)")
            }
            return buffer
        }
    }

    /// Closes the descriptor, on the pool (a read may still hold the lock there); reads still
    /// queued there are skipped. Only the first call does anything.
    func close() {
        cancellation.cancel()
        guard closeRequested.withLockedValue({ requested in
            defer { requested = true }
            return !requested
        }) else { return }
        let descriptor = self.descriptor
        _ = work.run(on: eventLoop) {
            descriptor.withLockedValue { open in
                if open >= 0 {
                    closeDescriptor(open)
                    open = -1
                }
            }
        }
    }

    deinit {
        // No read can be running: each one holds the reader.
        descriptor.withLockedValue { open in
            if open >= 0 {
                closeDescriptor(open)
                open = -1  // a close still queued on the pool finds nothing to close
            }
        }
    }
}

private func openForReading(_ path: String) -> Int32 {
    // Non-blocking, so opening a FIFO returns at once; regular files read the same either way.
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
}

private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
