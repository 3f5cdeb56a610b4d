import NIOCore
import ProxyCore

/// Turns a host name into addresses to connect to.
///
/// A protocol so tests can answer names without DNS. (`dns` rules do not go through it: the
/// exchange passes their addresses to the connector, which then skips resolving.)
public protocol HostResolver: Sendable {
    /// Resolves `host`; fails with `ProxyFailure.dnsFailure` naming the host and the reason, or
    /// `.dnsTimeout` when no answer came in time.
    func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]>
}

/// Resolves with the system's DNS configuration (`/etc/hosts`, then DNS with c-ares: the
/// servers and search domains of resolv.conf, or the servers given), every lookup in flight at once on
/// one thread of its own (`AresResolverThread`): a name whose servers never answer costs one
/// query until it times out, never a thread, so no number of them delays other names, nor map-
/// local files or rewrites. Each request waits at most `timeout` (`504 dns_timeout`).
///
/// IP literals are answered without a lookup. Two special-use names are answered locally as
/// RFC 6761 asks: `localhost` and `*.localhost` are loopback, and `*.invalid` never resolves —
/// so neither ever leaves the machine as a DNS query.
///
/// Only hosts in `HostName.normalized` form are resolved: rules matched that form, and
/// resolvers read other spellings their own way (`0x7f.1` is 127.0.0.1 to getaddrinfo), so a
/// host that reached here un-normalized is refused rather than dialled where no rule looked.
///
/// mDNS names (`*.local`, RFC 6762), which only the system's NSS modules can answer, go to
/// `getaddrinfo` on two threads of their own (`SystemNameLookup`): slow ones delay only other
/// `.local` names. Other names only NSS modules know (LDAP/NIS hosts, systemd's own names
/// without its stub in resolv.conf) do not resolve: `getaddrinfo` cannot be interrupted, and a
/// fallback to it for every name would bring back threads held by names that never answer.
public final class SystemHostResolver: HostResolver {
    /// How lookups are made, bounded and timed.
    public struct Configuration: Sendable {
        /// Names in flight at most (waited for or not, until DNS gives up on them); past it a
        /// lookup fails at once (502, "too many lookups in progress").
        public var maxPendingNames: Int
        /// How long a request waits for an answer before `504 dns_timeout`.
        public var timeout: TimeAmount
        /// DNS servers to ask instead of resolv.conf's (IP address and port).
        public var servers: [SocketAddress]
        /// The resolv.conf to read (tests); nil is `/etc/resolv.conf`.
        var resolvConfPath: String?
        /// The hosts file to read (tests); nil is `/etc/hosts`.
        var hostsPath: String?
        /// The least time between two looks at whether resolv.conf or the hosts file changed.
        var fileCheckInterval: TimeAmount = .seconds(2)

        public init(maxPendingNames: Int = 4096, timeout: TimeAmount = .seconds(5), servers: [SocketAddress] = []) {
            self.maxPendingNames = maxPendingNames
            self.timeout = timeout
            self.servers = servers
        }

        /// What c-ares is told: two rounds over the servers, the first waiting a third of the
        /// timeout and the second twice that, so with one server c-ares gives up about when the
        /// requests do, and a lost packet is sent again in time.
        var backend: AresResolverThread.Configuration {
            var channel = AresChannel.Configuration()
            channel.servers = servers
            channel.attemptTimeout = .nanoseconds(max(timeout.nanoseconds / 3, 1_000_000))
            channel.attempts = 2
            channel.resolvConfPath = resolvConfPath
            return AresResolverThread.Configuration(channel: channel, hostsPath: hostsPath, fileCheckInterval: fileCheckInterval)
        }
    }

    private let lookups: LookupFlights
    /// `.local` names: `getaddrinfo` (`SystemNameLookup`).
    private let multicastLookups: LookupFlights

    /// Reads the DNS configuration and starts the resolver's thread; throws, in words, when
    /// c-ares cannot start or the servers cannot be used.
    public convenience init(configuration: Configuration = Configuration()) throws {
        self.init(configuration: configuration, backend: try AresResolverThread(configuration: configuration.backend))
    }

    /// - Parameter backend: what looks names up (tests pass one whose answers they hand out).
    init(configuration: Configuration, backend: any NameLookupBackend, multicastBackend: (any NameLookupBackend)? = nil) {
        lookups = LookupFlights(backend: backend, maxPendingNames: configuration.maxPendingNames,
                                timeout: configuration.timeout)
        multicastLookups = LookupFlights(backend: multicastBackend ?? SystemNameLookup(), maxPendingNames: 64,
                                         timeout: configuration.timeout)
    }

    deinit {
        lookups.shutdown()
        multicastLookups.shutdown()
    }

    /// Answers every lookup still waiting ("shutting down"), refuses new ones and stops the
    /// resolver's thread (c-ares drops its queries and closes its sockets). Call it before the
    /// event loops shut down.
    public func shutdown() {
        lookups.shutdown()
        multicastLookups.shutdown()
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
        if name.hasSuffix(".local") {
            return multicastLookups.resolve(host: host, port: port, on: eventLoop)
        }
        return lookups.resolve(host: host, port: port, on: eventLoop)
    }
}
