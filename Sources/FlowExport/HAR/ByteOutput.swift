#if canImport(Glibc)
import Glibc
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    Glibc.write(descriptor, bytes, count)
}
private func systemClose(_ descriptor: Int32) -> Int32 { Glibc.close(descriptor) }
#elseif canImport(Darwin)
import Darwin
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    Darwin.write(descriptor, bytes, count)
}
private func systemClose(_ descriptor: Int32) -> Int32 { Darwin.close(descriptor) }
#endif

/// Where export bytes go: a file or stdout, buffered.
///
/// Exporters write through this rather than `FileHandle` so the destination (file, stdout, a
/// memory buffer in tests) is chosen by the caller and large exports never hold their output.
public protocol ByteOutput: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
    func flush() throws
}

/// Why writing an export failed, naming the destination.
public struct ByteOutputError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// Buffered (64 KiB) writes to a file descriptor: a file created for the export, or stdout.
///
/// Not thread-safe: one exporter writes to it at a time.
public final class FileOutput: ByteOutput {
    private var descriptor: Int32
    private let name: String
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private static let capacity = 64 * 1024

    private init(descriptor: Int32, name: String, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.ownsDescriptor = ownsDescriptor
        buffer.reserveCapacity(Self.capacity)
    }

    /// Standard output (`-` on the command line). `close()` flushes it but leaves it open.
    public static func standardOutput() -> FileOutput {
        FileOutput(descriptor: STDOUT_FILENO, name: "standard output", ownsDescriptor: false)
    }

    /// Creates (or truncates) the file at `path`. A new file gets `mode` (the umask may take
    /// bits away, never add them); an existing one keeps its own. The default is private: exports
    /// hold credentials and bodies.
    /// With `exclusive`, only a file this call creates is opened: anything already at `path`
    /// (a file, or a symlink someone planted to make us write into its target) is an error.
    public init(creatingFileAt path: String, mode: mode_t = 0o600, exclusive: Bool = false) throws {
        let flags = exclusive ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC : O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
        let descriptor = open(path, flags, mode)
        guard descriptor >= 0 else {
            throw ByteOutputError(description: "cannot create '\(path)': \(Self.describe(errno))")
        }
        self.descriptor = descriptor
        self.name = "'\(path)'"
        self.ownsDescriptor = true
        buffer.reserveCapacity(Self.capacity)
    }

    /// Sets the file's permission bits exactly (`fchmod`), whatever the umask. Only for a file
    /// this process created: never for stdout or a device the user pointed at.
    public func setPermissions(_ mode: mode_t) throws {
        guard ownsDescriptor, descriptor >= 0 else { return }
        guard fchmod(descriptor, mode) == 0 else {
            throw ByteOutputError(description: "cannot set the permissions of \(name): \(Self.describe(errno))")
        }
    }

    deinit {
        if ownsDescriptor && descriptor >= 0 {
            _ = systemClose(descriptor)
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > Self.capacity {
            try flush()
        }
        if bytes.count >= Self.capacity {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    public func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, then closes the file (stdout stays open). Safe to call twice.
    public func close() throws {
        guard descriptor >= 0 else { return }
        try flush()
        guard ownsDescriptor else { return }
        let result = systemClose(descriptor)
        descriptor = -1
        if result != 0 {
            throw ByteOutputError(description: "cannot finish writing \(name): \(Self.describe(errno))")
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        guard descriptor >= 0 else {
            throw ByteOutputError(description: "cannot write to \(name): it is already closed")
        }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw ByteOutputError(description: "cannot write to \(name): \(Self.describe(errno))")
            }
            offset += written
        }
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
