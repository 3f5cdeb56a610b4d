import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a data directory's control channel listens, and the socket calls both ends share.
///
/// The path is `<data-dir>/run/control.sock` — inside the 0700 data directory, so only its owner
/// reaches it even before the socket's own 0600 mode. A Unix socket path holds at most 107 bytes;
/// a deeper data directory uses `/tmp/proxyapp-control-<uid>/<hash of the data directory>.sock`
/// (that folder 0700), computed the same way by server and client.
public enum ControlSocket {
    public static func path(forDataDirectory directory: String) -> String {
        let preferred = (directory as NSString).appendingPathComponent("run/control.sock")
        if preferred.utf8.count <= maximumPathBytes { return preferred }
        return fallbackFolder + "/" + hash(directory) + ".sock"
    }

    /// `sun_path` is 108 bytes with its terminating NUL.
    static let maximumPathBytes = 107

    static var fallbackFolder: String { "/tmp/proxyapp-control-\(getuid())" }

    /// FNV-1a, 64 bits, as hex: stable across runs and processes (Swift's `hashValue` is not).
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        return String(value, radix: 16)
    }

    /// A `sockaddr_un` for `path`, passed to `body`.
    static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(maximumPathBytes))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Writes all of `bytes`; false when the peer went away.
    static func writeAll(_ descriptor: CInt, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Reads one line (without its `\n`) of at most `limit` bytes; nil at the end of input, on an
    /// error, for a line over the limit, or when `deadline` (of `monotonicNanoseconds`) passes
    /// first — a line sent a byte at a time ends there too. Reads wait as `SO_RCVTIMEO` says.
    static func readLine(_ descriptor: CInt, buffer: inout [UInt8], limit: Int, deadline: UInt64? = nil) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var searched = 0
        while true {
            if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            searched = buffer.count
            guard buffer.count <= limit else { return nil }
            if let deadline, monotonicNanoseconds() >= deadline { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && deadline != nil)) { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Why the fallback folder may not be used (it must be this user's own directory, 0700, not
    /// a link: another user could otherwise listen there first); nil when it may.
    static func fallbackFolderProblem() -> String? {
        var info = stat()
        guard lstat(fallbackFolder, &info) == 0 else { return "\(fallbackFolder) does not exist" }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            return "\(fallbackFolder) is not a private folder of this user (uid \(getuid()), mode 0700): remove it"
        }
        return nil
    }

    /// The user id of the process at the other end of `descriptor` (`SO_PEERCRED`); nil when the
    /// kernel does not say.
    static func peerUID(_ descriptor: CInt) -> UInt32? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, PeerCredentials.option, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }

    static func setTimeout(_ descriptor: CInt, seconds: Int, option: CInt) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// Linux's `struct ucred` (glibc shows it only with `_GNU_SOURCE`, which Swift's Glibc module
/// does not set): the peer's pid, uid and gid, as `SO_PEERCRED` fills it.
struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0

    /// `SO_PEERCRED` (asm-generic/socket.h).
    static let option: CInt = 17
}
