#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pipe the resolver's thread polls beside its DNS sockets, so another thread can wake it
/// (a new lookup, shutdown) while it waits in `poll`. Both ends are non-blocking: a full pipe
/// already means "wake up", and draining stops when it is empty.
struct WakePipe {
    /// What `poll` watches.
    let readEnd: Int32
    private let writeEnd: Int32

    /// Why the pipe could not be made.
    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw SetupError(description: "cannot create the DNS thread's wake-up pipe (errno \(errno))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the next (or current) `poll` on `readEnd` return.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe after `poll` reported it readable.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }

    /// Closes both ends; nobody may `signal` afterwards (the numbers may be reused).
    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
        #else
        _ = Darwin.close(readEnd)
        _ = Darwin.close(writeEnd)
        #endif
    }
}
