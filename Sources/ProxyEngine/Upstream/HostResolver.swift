import NIOCore
import NIOPosix
import ProxyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a host name into addresses to connect to.
///
/// A protocol so tests can answer names without DNS. (`dns` rules do not go through it: the
/// exchange passes their addresses to the connector, which then skips resolving.)
public protocol HostResolver: Sendable {
    /// Resolves `host`; fails with `ProxyFailure.dnsFailure` naming the host and the reason.
    func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]>
}

/// Resolves with the system's `getaddrinfo`, which blocks, so it runs on a thread pool and
/// never on an event loop.
///
/// IP literals are answered without a lookup. Two special-use names are answered locally as
/// RFC 6761 asks: `localhost` and `*.localhost` are loopback, and `*.invalid` never resolves —
/// so neither ever leaves the machine as a DNS query.
///
/// Only hosts in `HostName.normalized` form are resolved: rules matched that form, and
/// `getaddrinfo` reads other spellings its own way (`0x7f.1` is 127.0.0.1 to it), so a host
/// that reached here un-normalized is refused rather than dialled where no rule looked.
public final class SystemHostResolver: HostResolver {
    private let threadPool: NIOThreadPool

    public init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    public func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        guard HostName.normalized(host) == host else {
            return eventLoop.makeFailedFuture(
                ProxyFailure.dnsFailure(host: host, reason: "not resolved: the host is not in canonical form"))
        }
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return eventLoop.makeSucceededFuture([literal])
        }
        let name = host
        if name == "localhost" || name.hasSuffix(".localhost") {
            let addresses = [
                try? SocketAddress(ipAddress: "127.0.0.1", port: port),
                try? SocketAddress(ipAddress: "::1", port: port),
            ].compactMap { $0 }
            return eventLoop.makeSucceededFuture(addresses)
        }
        if name == "invalid" || name.hasSuffix(".invalid") {
            return eventLoop.makeFailedFuture(
                ProxyFailure.dnsFailure(host: host, reason: "Name or service not known (.invalid is reserved, RFC 6761)")
            )
        }
        return threadPool.runIfActive(eventLoop: eventLoop) {
            try Self.lookUp(host: host, port: port)
        }
    }

    private static func lookUp(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let first = result else {
            let reason = String(cString: gai_strerror(rc))
            throw ProxyFailure.dnsFailure(host: host, reason: reason)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(v4, host: host))
                case AF_INET6:
                    let v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(v6, host: host))
                default:
                    break
                }
            }
            cursor = info.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw ProxyFailure.dnsFailure(host: host, reason: "no IPv4 or IPv6 address")
        }
        return addresses
    }
}
