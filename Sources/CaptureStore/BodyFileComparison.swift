import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-for-byte comparison of a stored body file with a new body, so that a body shares a file
/// only when its bytes are the same, whatever its name says (`BodyContentHasher` is fast, not
/// collision-proof). Files are read in steps of `stepSize`, never whole, and never mapped: a file
/// cut short by hand reads as different instead of stopping the process.
enum BodyFileComparison {
    static let stepSize = 256 << 10

    /// True when the file at `path` holds exactly the bytes of `parts`, in order.
    static func file(_ path: String, holds parts: [Data]) -> Bool {
        guard let file = FileSteps(path),
              file.size == parts.reduce(0, { $0 + $1.count }) else { return false }
        return parts.allSatisfy { part in part.withUnsafeBytes { file.nextBytesMatch($0) } } && file.atEnd()
    }

    /// True when the files at `path` and `other` hold the same bytes: one file under two names
    /// (a spool that linked its stored twin, `BodyFileSpool`) without reading it.
    static func file(_ path: String, sameAs other: String) -> Bool {
        guard let file = FileSteps(path), let second = FileSteps(other), file.size == second.size else { return false }
        if file.identity == second.identity { return true }
        while true {
            guard let step = second.nextStep() else { return false }
            if step.isEmpty { return file.atEnd() }
            guard file.nextBytesMatch(step) else { return false }
        }
    }
}

/// One open file read forward in steps into a buffer of its own.
private final class FileSteps {
    let size: Int
    /// The file's device and inode numbers.
    let identity: [UInt64]
    private let descriptor: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: BodyFileComparison.stepSize, alignment: 16)

    init?(_ path: String) {
        guard let (descriptor, status) = SpoolFile.openRegularFile(path) else {
            buffer.deallocate()
            return nil
        }
        self.descriptor = descriptor
        size = Int(status.st_size)
        identity = [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// The next bytes of the file, up to a step's worth; empty at its end, nil on an error. Valid
    /// until the next call.
    func nextStep() -> UnsafeRawBufferPointer? {
        fill(buffer.count).map { UnsafeRawBufferPointer(rebasing: buffer[..<$0]) }
    }

    /// Whether the file's next `bytes.count` bytes are `bytes` (consumed either way).
    func nextBytesMatch(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let wanted = min(buffer.count, bytes.count - offset)
            guard fill(wanted) == wanted,
                  memcmp(buffer.baseAddress!, bytes.baseAddress! + offset, wanted) == 0 else { return false }
            offset += wanted
        }
        return true
    }

    /// Whether nothing is left to read.
    func atEnd() -> Bool {
        fill(1) == 0
    }

    /// Reads up to `count` bytes into the buffer, fewer only at the end of the file; nil on an
    /// error.
    private func fill(_ count: Int) -> Int? {
        var filled = 0
        while filled < count {
            let got = read(descriptor, buffer.baseAddress! + filled, count - filled)
            if got < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if got == 0 { break }
            filled += got
        }
        return filled
    }
}
