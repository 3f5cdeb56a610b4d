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
/// file replaced keeps the permission bits it had, as `>` in a shell would: the user chose that
/// file and its mode. Nothing written through is ever chmod'ed.
public enum ExportDestination: Sendable {
    case standardOutput
    /// Written to `partial`, renamed to `path` by `commit`; `existingMode` is the permission
    /// bits of the file being replaced (nil for a new file).
    case replacing(path: String, partial: String, existingMode: mode_t?)
    case direct(path: String)

    public init(path: String) {
        if path == "-" {
            self = .standardOutput
            return
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            self = (info.st_mode & S_IFMT) == S_IFREG
                ? .replacing(path: path, partial: path + ".partial", existingMode: info.st_mode & 0o777)
                : .direct(path: path)
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
        case .replacing(let path, _, _), .direct(let path): return path
        }
    }

    /// What a failed export left behind, for its error message.
    public var failureRemark: String {
        switch self {
        case .replacing: return "Nothing was written under that name."
        case .standardOutput, .direct: return "What was written so far is incomplete."
        }
    }

    /// Opens the file to write. `newFileMode` is what a new file gets (0700 for a script).
    public func open(newFileMode: mode_t = 0o600) throws -> FileOutput {
        switch self {
        case .standardOutput:
            return .standardOutput()
        case .replacing(_, let partial, let existingMode):
            let output = try FileOutput(creatingFileAt: partial, mode: newFileMode)
            try output.setPermissions(existingMode ?? newFileMode)
            return output
        case .direct(let path):
            return try FileOutput(creatingFileAt: path, mode: newFileMode)
        }
    }

    /// Closes `output` and puts the file in place.
    public func commit(_ output: FileOutput) throws {
        switch self {
        case .standardOutput:
            try output.flush()
        case .direct:
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
        case .direct:
            try? output.close()
        case .replacing(_, let partial, _):
            try? output.close()
            try? FileManager.default.removeItem(atPath: partial)
        }
    }
}
