import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells the resolver's thread when a configuration file changed (resolv.conf on a new network
/// or VPN, `/etc/hosts` edited), so new lookups follow it as glibc's resolver does: c-ares
/// reads resolv.conf only when a channel is made. One `stat` at most every `interval`, and only
/// when lookups come.
struct FileChangeWatch {
    private struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
    }

    let path: String
    private let interval: TimeAmount
    private var last: Stamp?
    private var checked: NIODeadline

    init(path: String, interval: TimeAmount, now: NIODeadline = .now()) {
        self.path = path
        self.interval = interval
        last = Self.stamp(path)
        checked = now
    }

    /// True when the file is different (or appeared, or went) since the last look, if that
    /// look is `interval` ago.
    mutating func changed(now: NIODeadline = .now()) -> Bool {
        guard now - checked >= interval else { return false }
        checked = now
        let current = Self.stamp(path)
        defer { last = current }
        return current != last
    }

    private static func stamp(_ path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Glibc)
        let modified = (Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec))
        #else
        let modified = (Int64(info.st_mtimespec.tv_sec), Int64(info.st_mtimespec.tv_nsec))
        #endif
        return Stamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                     modified: modified.0, modifiedNanoseconds: modified.1)
    }
}
