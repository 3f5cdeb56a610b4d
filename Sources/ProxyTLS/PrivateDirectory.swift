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
///
/// The data directory is one too (its capture holds credentials and decrypted bodies): the CLI
/// prepares it with `prepare()` and tightens the capture files in it with `restrictFiles(named:)`.
public struct PrivateDirectory {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

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

    /// A mode that was looser than private and has been tightened: the path, its old and new mode.
    public struct Tightened: Sendable, Equatable, CustomStringConvertible {
        public let path: String
        public let oldMode: mode_t
        public let newMode: mode_t

        /// `/home/a/.proxyapp 755 → 700`
        public var description: String { "\(path) \(String(oldMode, radix: 8)) → \(String(newMode, radix: 8))" }
    }

    /// A directory others may create files in and that cannot be made private: one of another
    /// user that its group or everyone may write (`--data-dir /tmp` for anyone but root), or a
    /// sticky shared one (`/tmp` itself, for root: chmod 700 would break it for everyone). Files
    /// planted there before ours (a 0666 `traffic.sqlite-wal`, a symlink) receive what we write.
    public struct SharedDirectoryError: Error, CustomStringConvertible, Equatable {
        public let path: String
        public let mode: mode_t
        public let owner: uid_t

        public var description: String {
            "others may create files in \(path) (mode \(String(mode, radix: 8))"
                + (owner == geteuid() ? ", a shared directory" : ", owned by uid \(owner)")
                + "), so files they plant there would receive captured traffic"
        }
    }

    /// An entry of the directory that neither this user nor the directory's owner made.
    public struct ForeignEntry: Sendable, Equatable {
        public let path: String
        public let owner: uid_t
    }

    /// Creates the directory if needed (missing parents too, each 0700) and makes it 0700.
    /// Returns the old mode when the directory let its group or others in. A directory owned by
    /// another user is left as it is (it is not ours to change), unless others may write to it:
    /// then, as for a sticky shared directory of ours, it throws `SharedDirectoryError`.
    @discardableResult
    public func prepare() throws -> Tightened? {
        try createMissing(url.standardizedFileURL.path)
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw Self.posixError(path: url.path) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CertificateAuthorityError.fileSystem(path: url.path, reason: "not a directory")
        }
        let mode = info.st_mode & 0o7777
        if mode & 0o022 != 0, info.st_uid != geteuid() || mode & S_ISVTX != 0 {
            throw SharedDirectoryError(path: url.path, mode: mode, owner: info.st_uid)
        }
        guard info.st_uid == geteuid(), mode != 0o700 else { return nil }
        guard chmod(url.path, 0o700) == 0 else { throw Self.posixError(path: url.path) }
        return mode & 0o077 != 0 ? Tightened(path: url.path, oldMode: mode, newMode: 0o700) : nil
    }

    /// `mkdir -p -m 700`: every missing directory on the way to `path` is created 0700 (set
    /// explicitly: the umask could take the owner's bits away).
    private func createMissing(_ path: String) throws {
        var missing: [String] = []
        var current = path
        var info = stat()
        while !current.isEmpty, current != "/", stat(current, &info) != 0 {
            guard errno == ENOENT else { throw Self.posixError(path: current) }
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw Self.posixError(path: directory) }
            _ = chmod(directory, 0o700)
        }
    }

    /// Makes the named files of the directory 0600 (owner read and write only) where their
    /// group or others had any access; returns those it changed. Missing files, files of other
    /// users and anything but a regular file (a symlink is not followed) are left alone.
    public func restrictFiles(named names: [String]) -> [Tightened] {
        names.compactMap { name in
            let path = url.appendingPathComponent(name).path
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
                return nil
            }
            let mode = info.st_mode & 0o7777
            guard mode & 0o077 != 0, fchmod(descriptor, mode & 0o700) == 0 else { return nil }
            return Tightened(path: path, oldMode: mode, newMode: mode & 0o700)
        }
    }

    /// The named entries (as `lstat` sees them: a symlink by its own owner) that belong to
    /// neither this user nor the directory's owner: planted by someone else, to be refused
    /// rather than written into.
    public func foreignEntries(named names: [String]) -> [ForeignEntry] {
        var directory = stat()
        guard stat(url.path, &directory) == 0 else { return [] }
        return names.compactMap { name in
            let path = url.appendingPathComponent(name).path
            var info = stat()
            guard lstat(path, &info) == 0, info.st_uid != geteuid(), info.st_uid != directory.st_uid else { return nil }
            return ForeignEntry(path: path, owner: info.st_uid)
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
