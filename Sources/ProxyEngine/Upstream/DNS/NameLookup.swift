import NIOCore

/// Why a name lookup gave no addresses, as the DNS side saw it; `LookupFlights` turns it into
/// the `ProxyFailure` each waiting request is answered with.
enum NameLookupError: Error, Equatable, Sendable {
    /// No server answered in time (504 `dns_timeout`).
    case noAnswer
    /// An answer that was not addresses, or a local problem: one line in words (502 `dns_error`).
    case failed(reason: String)
}

/// Starts name lookups for `LookupFlights` and reports each answer once.
///
/// A protocol so the flights' bookkeeping (single flight, timeouts, the bound, shutdown) is
/// tested with answers the test hands out, apart from c-ares and sockets (`AresResolverThread`).
protocol NameLookupBackend: Sendable {
    /// Starts looking up the IPv4 and IPv6 addresses of `name` and returns at once. `answer`
    /// gets the addresses (port 0) or the reason, exactly once, on any thread; after
    /// `shutdown()` it may never be called.
    func lookUp(_ name: String, answer: @escaping @Sendable (Result<[SocketAddress], NameLookupError>) -> Void)

    /// Stops looking anything up and releases the backend's threads and sockets.
    func shutdown()
}
