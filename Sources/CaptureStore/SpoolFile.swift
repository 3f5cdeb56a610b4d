import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations a `BodyFileSpool` runs on its queue while it checks a body against a
/// stored twin: read in steps of `stepSize` (never mapped: a file cut short by hand reads as
/// different instead of stopping the process), regular files only, no symbolic links followed.
enum SpoolFile {
    static let stepSize = 64 << 10
    static let copyStepSize = 1 << 20

    /// Creates the file at `path` (mode 0600) and opens it with `flags`; never opens a file that
    /// was there (`O_EXCL`: one left at that path is removed first, once). -1 when it cannot.
    static func create(_ path: String, flags: Int32) -> Int32 {
        let all = flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var descriptor = open(path, all, 0o600)
        if descriptor < 0 && errno == EEXIST {
            unlink(path)
            descriptor = open(path, all, 0o600)
        }
        return descriptor
    }

    /// The size of the regular file at `path`; nil when it is not one.
    static func size(of path: String) -> Int? {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Whether the file at `path` holds `bytes` from `offset` on.
    static func bytes(at offset: Int, of path: String, match bytes: UnsafeRawBufferPointer) -> Bool {
        guard let file = openForReading(path) else { return false }
        defer { close(file) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: stepSize, alignment: 16)
        defer { buffer.deallocate() }
        var done = 0
        while done < bytes.count {
            let wanted = min(stepSize, bytes.count - done)
            guard readFully(file, into: buffer.baseAddress!, count: wanted, at: offset + done),
                  memcmp(buffer.baseAddress!, bytes.baseAddress! + done, wanted) == 0 else { return false }
            done += wanted
        }
        return true
    }

    /// Whether the files at `path` and `other` both start with the same `count` bytes.
    static func file(_ path: String, startsWithFile other: String, count: Int) -> Bool {
        guard let first = openForReading(path) else { return false }
        defer { close(first) }
        guard let second = openForReading(other) else { return false }
        defer { close(second) }
        let buffers = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * stepSize, alignment: 16)
        defer { buffers.deallocate() }
        let a = buffers.baseAddress!, b = buffers.baseAddress! + stepSize
        var done = 0
        while done < count {
            let wanted = min(stepSize, count - done)
            guard readFully(first, into: a, count: wanted, at: done), readFully(second, into: b, count: wanted, at: done),
                  memcmp(a, b, wanted) == 0 else { return false }
            done += wanted
        }
        return true
    }

    /// Copies the first `count` bytes of the file at `source` to a new file at `destination`
    /// (mode 0600), and returns their hash so far; nil when a read or write failed (the new file
    /// is then removed).
    static func copy(count: Int, from source: String, to destination: String) -> BodyContentHasher? {
        guard let input = openForReading(source) else { return nil }
        defer { close(input) }
        let output = create(destination, flags: O_WRONLY)
        guard output >= 0 else { return nil }
        defer { close(output) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: copyStepSize, alignment: 16)
        defer { buffer.deallocate() }
        let hasher = BodyContentHasher()
        var done = 0
        while done < count {
            let wanted = min(copyStepSize, count - done)
            let step = UnsafeRawBufferPointer(rebasing: buffer[..<wanted])
            guard readFully(input, into: buffer.baseAddress!, count: wanted, at: done),
                  BodyFileStore.writeAll(step, to: output) == nil else {
                unlink(destination)
                return nil
            }
            hasher.update(step)
            done += wanted
        }
        return hasher
    }

    private static func openForReading(_ path: String) -> Int32? {
        openRegularFile(path)?.descriptor
    }

    /// Opens the regular file at `path` for reading, never through a symbolic link; nil for
    /// anything else. The caller closes the descriptor.
    static func openRegularFile(_ path: String) -> (descriptor: Int32, status: stat)? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return nil
        }
        return (descriptor, status)
    }

    /// Reads exactly `count` bytes at `offset`; false at an error or the file's end.
    private static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Bool {
        var filled = 0
        while filled < count {
            let got = pread(descriptor, buffer + filled, count - filled, off_t(offset + filled))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return false }
            filled += got
        }
        return true
    }

}
