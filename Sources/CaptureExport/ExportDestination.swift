import FlowExport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a HAR export (`proxyapp export --har`, the TUI's `e`) writes, and how the file comes into place.
///
/// A new file, or an existing regular file, is written beside its name (`FILE.partial`) and
/// renamed over it at the end, so a failed export never leaves half a HAR under that name.
/// Anything else — stdout (`-`), a symlink, a device such as `/dev/stdout`, a FIFO from
/// `>(gzip > x.gz)` — is written through directly: renaming over it would replace the link or
/// the device node instead of writing into what it points at.
public enum ExportDestination: Sendable {
    case standardOutput
    /// Written to `partial`, renamed to `path` by `commit`.
    case replacing(path: String, partial: String)
    case direct(path: String)

    public init(path: String) {
        if path == "-" {
            self = .standardOutput
            return
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            self = (info.st_mode & S_IFMT) == S_IFREG ? .replacing(path: path, partial: path + ".partial") : .direct(path: path)
        } else {
            // Missing (the usual case): a new file. Any other failure (a directory we may not
            // search, say) surfaces when the file is opened.
            self = errno == ENOENT ? .replacing(path: path, partial: path + ".partial") : .direct(path: path)
        }
    }

    /// How messages name it.
    public var name: String {
        switch self {
        case .standardOutput: return "stdout"
        case .replacing(let path, _), .direct(let path): return path
        }
    }

    /// What a failed export left behind, for its error message.
    public var failureRemark: String {
        switch self {
        case .replacing: return "Nothing was written under that name."
        case .standardOutput, .direct: return "What was written so far is incomplete."
        }
    }

    public func open() throws -> FileOutput {
        switch self {
        case .standardOutput: return .standardOutput()
        case .replacing(_, let partial): return try FileOutput(creatingFileAt: partial)
        case .direct(let path): return try FileOutput(creatingFileAt: path)
        }
    }

    /// Closes `output` and puts the file in place.
    public func commit(_ output: FileOutput) throws {
        switch self {
        case .standardOutput:
            try output.flush()
        case .direct:
            try output.close()
        case .replacing(let path, let partial):
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
        case .replacing(_, let partial):
            try? output.close()
            try? FileManager.default.removeItem(atPath: partial)
        }
    }
}
