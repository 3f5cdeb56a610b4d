import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The TCP sockets of this test process seen from the inside: with an in-process proxy, the
/// proxy's own client-side and origin-side sockets, found by their ports, with the options the
/// kernel holds for them (what the proxy really set, whatever it asked NIO for).
enum OwnSockets {
    /// One IPv4 TCP socket of this process.
    struct Socket {
        let descriptor: Int32
        let localPort: Int
        let peerPort: Int

        /// An integer socket option, as `getsockopt` reads it.
        func option(level: Int32, name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(descriptor, level, name, &value, &length) == 0 ? value : nil
        }
    }

    /// Every connected IPv4 socket among this process's descriptors.
    static func connected() throws -> [Socket] {
        let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return names.compactMap { Int32($0) }.compactMap { descriptor in
            guard let local = port(descriptor, getsockname), let peer = port(descriptor, getpeername) else { return nil }
            return Socket(descriptor: descriptor, localPort: local, peerPort: peer)
        }
    }

    private static func port(_ descriptor: Int32,
                             _ read: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { read(descriptor, $0, &length) }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
