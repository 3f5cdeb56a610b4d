import FlowExport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an export (`proxyapp export --har`, the TUI's `e` and `c`) writes, and how the file
/// comes into place.
///
/// A new file, or an existing regular file, is written beside its name (`FILE.partial`) and
/// renamed over it at the end, so a failed export never leaves half a file under that name.
/// Anything else — stdout (`-`), a symlink, a device such as `/dev/stdout`, a FIFO from
/// `>(gzip > x.gz)` — is written through directly: renaming over it would replace the link or
/// the device node instead of writing into what it points at.
///
/// Permissions: a new file is private (0600 by default; exports hold credentials and bodies). A
/// file of the user's own that is replaced keeps the permission bits it had, as `>` in a shell
/// would: the user chose that file and its mode. A file another user left there (a 0666 file in
/// a shared directory) is not the user's choice: the export replacing it is private. Nothing
/// written through is ever chmod'ed.
///
/// Shared directories: `FILE.partial` is only ever a file this export creates (a symlink
/// planted under that name made the export overwrite and chmod the link's target), and a
/// symlink owned by another user is not written through (the kernel's `protected_symlinks`
/// rule, which not every system turns on).
public enum ExportDestination: Sendable {
    case standardOutput
    /// Written to `partial`, renamed to `path` by `commit`; `existingMode` is the permission
    /// bits of the user's own file being replaced (nil for a new file or another user's).
    case replacing(path: String, partial: String, existingMode: mode_t?)
    case direct(path: String)
    /// Not written: `reason` says why.
    case refused(path: String, reason: String)

    public init(path: String) {
        if path == "-" {
            self = .standardOutput
            return
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            let ours = info.st_uid == geteuid()
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                self = .replacing(path: path, partial: path + ".partial", existingMode: ours ? info.st_mode & 0o777 : nil)
            case S_IFLNK where !ours && info.st_uid != 0:
                self = .refused(path: path, reason: "it is a symbolic link of another user (uid \(info.st_uid)): "
                                + "not writing through it; remove it or choose another name")
            default:
                self = .direct(path: path)
            }
        } else {
            // Missing (the usual case): a new file. Any other failure (a directory we may not
            // search, say) surfaces when the file is opened.
            self = errno == ENOENT ? .replacing(path: path, partial: path + ".partial", existingMode: nil) : .direct(path: path)
        }
    }

    /// How messages name it.
    public var name: String {
        switch self {
        case .standardOutput: return "stdout"
        case .replacing(let path, _, _), .direct(let path), .refused(let path, _): return path
        }
    }

    /// What a failed export left behind, for its error message.
    public var failureRemark: String {
        switch self {
        case .replacing, .refused: return "Nothing was written under that name."
        case .standardOutput, .direct: return "What was written so far is incomplete."
        }
    }

    /// Opens the file to write. `newFileMode` is what a new file gets (0700 for a script).
    public func open(newFileMode: mode_t = 0o600) throws -> FileOutput {
        switch self {
        case .standardOutput:
            return .standardOutput()
        case .replacing(_, let partial, let existingMode):
            // A partial file left by an export that died, or anything planted under its name:
            // removed (a symlink itself, never its target), and only a file created now is used.
            var info = stat()
            if lstat(partial, &info) == 0 { unlink(partial) }
            let output = try FileOutput(creatingFileAt: partial, mode: newFileMode, exclusive: true)
            try output.setPermissions(existingMode ?? newFileMode)
            return output
        case .direct(let path):
            return try FileOutput(creatingFileAt: path, mode: newFileMode)
        case .refused(_, let reason):
            throw ByteOutputError(description: reason)
        }
    }

    /// Closes `output` and puts the file in place.
    public func commit(_ output: FileOutput) throws {
        switch self {
        case .standardOutput:
            try output.flush()
        case .direct, .refused:
            try output.close()
        case .replacing(let path, let partial, _):
            try output.close()
            if rename(partial, path) != 0 {
                throw HARFileExportError("cannot move \(partial) to \(path): \(String(cString: strerror(errno))).")
            }
        }
    }

    /// After a failure: closes `output` and removes what a `.replacing` export wrote.
    public func abandon(_ output: FileOutput) {
        switch self {
        case .standardOutput:
            try? output.flush()
        case .direct, .refused:
            try? output.close()
        case .replacing(_, let partial, _):
            try? output.close()
            try? FileManager.default.removeItem(atPath: partial)
        }
    }
}
