import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TerminalUI

/// The last part of a log file, as lines: bounded in bytes and lines, so a log that grew for
/// months costs the same as a new one.
enum LogTail {
    static let maximumBytes = 256 << 10
    static let maximumLines = 5_000
    /// Longer lines are cut (a body quoted in a log line must not make one screen row a megabyte).
    static let maximumLineLength = 2_000

    /// Reads the tail of `path`. Opened without blocking (a FIFO planted there cannot hold the
    /// reader) and only when it is a regular file.
    static func read(path: String, maximumBytes: Int = maximumBytes) -> (EventLogPage.Content, signature: [Int]) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            return (code == ENOENT ? .missing : .failed(String(cString: strerror(code))), [])
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return (.failed(String(cString: strerror(errno))), []) }
        guard info.st_mode & S_IFMT == S_IFREG else { return (.failed("not a regular file"), []) }
        let size = Int(info.st_size)
        let signature = [Int(info.st_ino), size, Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        let start = max(0, size - maximumBytes)
        var bytes = [UInt8](repeating: 0, count: size - start)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(start + filled))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return (lines(bytes.prefix(filled), startsMidFile: start > 0), signature)
    }

    /// Splits `bytes` into lines (invalid UTF-8 shown as `�`, CR before LF dropped, tabs as
    /// spaces); a first line that began before `bytes` is left out, and so are all but the last
    /// `maximumLines`.
    static func lines(_ bytes: ArraySlice<UInt8>, startsMidFile: Bool, maximumLines: Int = maximumLines) -> EventLogPage.Content {
        var parts = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var truncated = startsMidFile
        if startsMidFile, !parts.isEmpty { parts.removeFirst() }
        if parts.last?.isEmpty == true { parts.removeLast() }
        if parts.count > maximumLines {
            parts.removeFirst(parts.count - maximumLines)
            truncated = true
        }
        let lines = parts.map { part -> String in
            var line = String(decoding: part.last == UInt8(ascii: "\r") ? part.dropLast() : part, as: UTF8.self)
            if line.count > maximumLineLength { line = String(line.prefix(maximumLineLength)) + "…" }
            return line.replacingOccurrences(of: "\t", with: "    ")
        }
        return .lines(lines, truncated: truncated)
    }
}

/// The event log view's data side: reads the log file's tail on a queue of its own and keeps
/// the newest result, which the UI thread takes under a short lock, so the view never waits on
/// the disk. While the view is up the controller asks for a refresh every half second; an
/// unchanged file (same inode, size and time) is not read again.
final class EventLogFeed: Sendable {
    let path: String
    private let queue = DispatchQueue(label: "proxyapp.tui.event-log")
    private struct State {
        var content = EventLogPage.Content.loading
        var signature: [Int] = []
        var reading = false
        var lastRequest: DispatchTime?
    }
    private let state = NIOLockedValueBox(State())

    init(path: String) {
        self.path = path
    }

    /// What was read last.
    var content: EventLogPage.Content { state.withLockedValue { $0.content } }

    /// Starts a read unless one is running or the last began less than `interval` ago (`force`
    /// ignores the interval: the view was just opened).
    func refresh(interval: Double = 0.5, force: Bool = false) {
        let now = DispatchTime.now()
        let start = state.withLockedValue { state -> Bool in
            guard !state.reading else { return false }
            if !force, let last = state.lastRequest, now.uptimeNanoseconds - last.uptimeNanoseconds < UInt64(interval * 1e9) {
                return false
            }
            state.reading = true
            state.lastRequest = now
            return true
        }
        guard start else { return }
        queue.async { [path, state] in
            let known = state.withLockedValue { $0.signature }
            var info = stat()
            let current = stat(path, &info) == 0
                ? [Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)] : []
            if !current.isEmpty, current == known {
                state.withLockedValue { $0.reading = false }
                return
            }
            let (content, signature) = LogTail.read(path: path)
            state.withLockedValue {
                $0.content = content
                $0.signature = signature
                $0.reading = false
            }
        }
    }

    /// Waits until a running read finished (tests).
    func waitUntilIdle() {
        queue.sync {}
    }
}
