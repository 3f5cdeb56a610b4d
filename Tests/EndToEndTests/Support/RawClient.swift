import Foundation
#if canImport(Glibc)
import Glibc
private let systemConnect = Glibc.connect
private let systemClose = Glibc.close
private let systemSend = Glibc.send
private let sendFlags = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
import Darwin
private let systemConnect = Darwin.connect
private let systemClose = Darwin.close
private let systemSend = Darwin.send
private let sendFlags: Int32 = 0
#endif

/// A blocking TCP client over a plain socket, for what curl cannot be made to send: pipelined
/// requests in one write, malformed requests, oversized header sections, CONNECT and upgrade
/// handshakes followed by raw bytes, or nothing at all (idle timeout).
///
/// Every read has a deadline. Bytes read but not yet consumed stay in `pending`, so responses
/// can be taken off one at a time.
final class RawClient {
    struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    private var fd: Int32
    /// The client's own port: what the proxy records as the flow's client address.
    let localPort: Int
    /// Received bytes not consumed yet.
    private(set) var pending = Data()
    /// True once the peer closed (EOF) or reset the connection.
    private(set) var peerClosed = false

    /// Connects to `host:port` (127.0.0.1 unless told).
    /// - Parameter host: an IPv4 address of this machine; connecting to a non-loopback one makes
    ///   the connection come from it (a client "from another machine").
    init(port: Int, host: String = "127.0.0.1") throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw SocketError(description: "connect to \(host):\(port): errno \(code)")
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.localPort = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit {
        close()
    }

    func close() {
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    /// Writes all of `data` (blocking).
    func send(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = systemSend(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
                guard written > 0 else { throw SocketError(description: "send: errno \(errno)") }
                offset += written
            }
        }
    }

    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    /// Closes abortively: the peer gets a reset (RST) instead of an orderly end of input.
    func abort() {
        guard fd >= 0 else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Half-closes: the peer sees end of input, reading stays possible.
    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads into `pending` until `done(pending)` holds, the peer closes, or `timeout` passes.
    /// Returns whether `done` held.
    @discardableResult
    func read(timeout: TimeInterval, until done: (Data) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        // Bounded by the deadline and by a count of polls.
        for _ in 0..<100_000 {
            if done(pending) { return true }
            if peerClosed { return false }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { throw SocketError(description: "poll: errno \(errno)") }
            guard ready > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                pending.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno == ECONNRESET {
                peerClosed = true
            } else if errno != EINTR && errno != EAGAIN {
                throw SocketError(description: "recv: errno \(errno)")
            }
        }
        return done(pending)
    }

    /// Reads until the peer closes or `timeout` passes; returns whether it closed.
    func readUntilClose(timeout: TimeInterval) throws -> Bool {
        try read(timeout: timeout) { _ in false }
        return peerClosed
    }

    /// Reads and discards until `count` bytes in all were received (pending ones included), the
    /// peer closes, or `timeout` passes; returns how many were received. For bodies too large to
    /// keep.
    func drain(count: Int, timeout: TimeInterval) throws -> Int {
        var received = pending.count
        pending.removeAll()
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        // Bounded by the deadline and by a count of reads.
        for _ in 0..<1_000_000 where received < count && !peerClosed {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { break }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { throw SocketError(description: "poll: errno \(errno)") }
            guard ready > 0 else { continue }
            let read = recv(fd, &buffer, min(buffer.count, count - received), 0)
            if read > 0 {
                received += read
            } else if read == 0 || errno == ECONNRESET {
                peerClosed = true
            } else if errno != EINTR && errno != EAGAIN {
                throw SocketError(description: "recv: errno \(errno)")
            }
        }
        return received
    }

    /// Removes and returns the first `count` pending bytes, reading more if needed.
    func receive(count: Int, timeout: TimeInterval) throws -> Data {
        try read(timeout: timeout) { $0.count >= count }
        guard pending.count >= count else {
            throw SocketError(description: "expected \(count) bytes, got \(pending.count) (peer closed: \(peerClosed))")
        }
        let data = pending.prefix(count)
        pending.removeFirst(count)
        return Data(data)
    }

    /// Reads and removes one complete response from `pending`.
    func readResponse(noBody: Bool = false, timeout: TimeInterval = 10) throws -> RawResponse {
        var parsed: (RawResponse, Int)?
        var parseError: (any Error)?
        try read(timeout: timeout) { data in
            do {
                parsed = try RawResponse.parse(data, noBody: noBody, atEOF: false)
            } catch {
                parseError = error
                return true
            }
            return parsed != nil
        }
        if let parseError { throw parseError }
        if parsed == nil && peerClosed {
            parsed = try RawResponse.parse(pending, noBody: noBody, atEOF: true)
        }
        guard let (response, used) = parsed else {
            throw SocketError(description: "no complete response within \(timeout)s (peer closed: \(peerClosed)); "
                              + "received: \(String(decoding: pending.prefix(300), as: UTF8.self))")
        }
        pending.removeFirst(used)
        return response
    }
}
