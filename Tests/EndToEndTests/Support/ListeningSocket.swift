import Foundation
#if canImport(Glibc)
import Glibc
private let systemClose = Glibc.close
private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
import Darwin
private let systemClose = Darwin.close
private let systemConnect = Darwin.connect
#endif

/// A loopback port held by a plain socket, in one of two states that make upstream connections
/// fail in a known way without leaving the machine:
///
/// - `refusing()`: bound but not listening. Connecting gets `ECONNREFUSED`, and because the
///   socket stays bound no other test can take the port meanwhile.
/// - `stalled()`: listening with a backlog of 0 that is kept full and never accepted. Linux drops
///   further SYNs, so a connect hangs until the connector's timeout.
final class ListeningSocket {
    let port: Int
    private var fd: Int32
    private var fillers: [Int32] = []

    private init(fd: Int32, port: Int) {
        self.fd = fd
        self.port = port
    }

    deinit {
        close()
    }

    /// Closes the socket and any filler connections.
    func close() {
        for filler in fillers { _ = systemClose(filler) }
        fillers.removeAll()
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    /// A bound, non-listening socket: connections to `port` are refused.
    static func refusing() throws -> ListeningSocket {
        let fd = try makeSocket()
        let port = try bindLoopback(fd)
        return ListeningSocket(fd: fd, port: port)
    }

    /// A listening socket whose accept queue is full: connections to `port` hang in SYN-SENT.
    /// Returns nil when this kernel still completes handshakes (then the test cannot run).
    static func stalled() throws -> ListeningSocket? {
        let fd = try makeSocket()
        let port = try bindLoopback(fd)
        let socket = ListeningSocket(fd: fd, port: port)
        guard listen(fd, 0) == 0 else { throw RawClient.SocketError(description: "listen: errno \(errno)") }
        // Fill the queue: stop at the first connection that does not complete at once.
        for _ in 0..<16 {
            let filler = try makeSocket()
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            socket.fillers.append(filler)
            var address = loopback(port: port)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if result == 0 { continue }
            guard errno == EINPROGRESS else { throw RawClient.SocketError(description: "connect: errno \(errno)") }
            var descriptor = pollfd(fd: filler, events: Int16(POLLOUT), revents: 0)
            if poll(&descriptor, 1, 300) == 0 {
                return socket  // this one hangs: so will the proxy's
            }
        }
        return nil
    }

    private static func makeSocket() throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw RawClient.SocketError(description: "socket: errno \(errno)") }
        return fd
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func bindLoopback(_ fd: Int32) throws -> Int {
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            _ = systemClose(fd)
            throw RawClient.SocketError(description: "bind: errno \(errno)")
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: local.sin_port))
    }
}
