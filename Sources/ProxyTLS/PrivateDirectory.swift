import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory only its owner may enter (mode 0700), with the file operations the CA store needs:
/// files written atomically (a temporary file with its final mode from the first byte, synced,
/// then renamed over the old one) and an exclusive lock so two processes starting at once do not
/// both create a CA.
struct PrivateDirectory {
    let url: URL

    /// A file to write: its name in the directory, its bytes and its mode.
    struct FileContents {
        let name: String
        let bytes: [UInt8]
        let mode: mode_t
    }

    /// A file written to a temporary name, waiting for `commit` to take its final name.
    private struct StagedFile {
        let temporaryPath: String
        let finalPath: String
    }

    /// Creates the directory if needed (its parents with default modes) and makes it 0700.
    func prepare() throws {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
        } catch {
            throw CertificateAuthorityError.fileSystem(path: url.path, reason: Self.reason(error))
        }
    }

    /// Runs `body` holding an exclusive `flock` on `.lock` in the directory (created if needed).
    func withExclusiveLock<T>(_ body: () throws -> T) throws -> T {
        try prepare()
        let lockPath = url.appendingPathComponent(".lock").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.posixError(path: lockPath) }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Self.posixError(path: lockPath) }
        }
        return try body()
    }

    /// Writes every file to a temporary name, then renames them in order over the old ones. A
    /// reader sees each file either old or new, never partly written.
    func replace(_ files: [FileContents]) throws {
        var staged: [StagedFile] = []
        do {
            for file in files { staged.append(try stage(file.bytes, as: file.name, mode: file.mode)) }
        } catch {
            for file in staged { unlink(file.temporaryPath) }
            throw error
        }
        try commit(staged)
    }

    /// Writes `bytes` with `mode` to a temporary file beside `name` and syncs it to disk.
    private func stage(_ bytes: [UInt8], as name: String, mode: mode_t) throws -> StagedFile {
        let finalPath = url.appendingPathComponent(name).path
        let temporaryPath = url.appendingPathComponent(".\(name).\(getpid()).\(UInt32.random(in: .min ... .max)).tmp").path
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Self.posixError(path: temporaryPath) }
        defer { close(descriptor) }
        do {
            try Self.writeAll(bytes, to: descriptor, path: temporaryPath)
            guard fsync(descriptor) == 0 else { throw Self.posixError(path: temporaryPath) }
        } catch {
            unlink(temporaryPath)
            throw error
        }
        return StagedFile(temporaryPath: temporaryPath, finalPath: finalPath)
    }

    /// Renames staged files to their final names, in order, then syncs the directory entry.
    /// A failure removes the staged files not yet renamed.
    private func commit(_ files: [StagedFile]) throws {
        for (index, file) in files.enumerated() where rename(file.temporaryPath, file.finalPath) != 0 {
            let error = Self.posixError(path: file.finalPath)
            for leftover in files[index...] { unlink(leftover.temporaryPath) }
            throw error
        }
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
    }

    func fileExists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path)
    }

    func read(_ name: String) throws -> [UInt8] {
        let path = url.appendingPathComponent(name).path
        do { return Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw CertificateAuthorityError.fileSystem(path: path, reason: Self.reason(error))
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                guard errno == EINTR else { throw posixError(path: path) }
                continue
            }
            offset += written
        }
    }

    private static func posixError(path: String) -> CertificateAuthorityError {
        .fileSystem(path: path, reason: String(cString: strerror(errno)))
    }

    private static func reason(_ error: any Error) -> String {
        error.localizedDescription
    }
}
