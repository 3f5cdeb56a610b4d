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

    /// Reads one line (without its `\n`) of at most `limit` bytes; nil at the end of input, on a
    /// timeout or error, or for a line over the limit.
    static func readLine(_ descriptor: CInt, buffer: inout [UInt8], limit: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            guard buffer.count <= limit else { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    static func setTimeout(_ descriptor: CInt, seconds: Int, option: CInt) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}
