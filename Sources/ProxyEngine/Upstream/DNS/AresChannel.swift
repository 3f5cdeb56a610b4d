import CAres
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One c-ares channel: the DNS configuration read once (resolv.conf's servers, search domains
/// and `ndots`, or the servers given) and every query sent with it.
///
/// Used only on the resolver's thread (c-ares 1.18 channels are not thread-safe), which polls
/// the sockets the channel reports in `state.interest` and calls `process`. Our settings over
/// resolv.conf's: DNS only (`lookups "b"`: the thread answers `/etc/hosts` names itself from
/// `HostsFile`, as c-ares would parse the file again for every lookup); `HOSTALIASES` ignored
/// (c-ares would open that file on our one thread, and a FIFO there blocks every lookup); each
/// server waits `attemptTimeout` (doubled each round) for `attempts` rounds, so a name nobody
/// answers leaves c-ares about when its requests gave up.
final class AresChannel {
    /// How the channel asks.
    struct Configuration: Sendable {
        /// Servers to ask instead of resolv.conf's (address and port); empty: resolv.conf's.
        var servers: [SocketAddress] = []
        /// How long one server gets to answer in the first round (later rounds double it).
        var attemptTimeout: TimeAmount = .seconds(1)
        /// Rounds over all servers before the lookup fails with "no answer".
        var attempts = 2
        /// The resolv.conf to read; nil is the system's (`/etc/resolv.conf`).
        var resolvConfPath: String?
    }

    /// What c-ares reports to its callbacks, which cannot capture context: the sockets it wants
    /// watched (`sock_state_cb`) and how many of its queries have not answered yet.
    final class State {
        /// Each socket c-ares uses, and whether it waits to read and to write.
        var interest: [Int32: (read: Bool, write: Bool)] = [:]
        /// Queries started and not yet answered.
        var pending = 0
    }

    /// A query's context while c-ares holds it (retained by hand: c-ares passes it back as `arg`).
    private final class Query {
        let name: String
        let state: State
        let answer: (Result<[SocketAddress], NameLookupError>) -> Void

        init(name: String, state: State, answer: @escaping (Result<[SocketAddress], NameLookupError>) -> Void) {
            self.name = name
            self.state = state
            self.answer = answer
        }
    }

    /// Why a channel could not be made, in words.
    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    let state = State()
    private let channel: ares_channel
    private var destroyed = false

    /// `ares_library_init` once per process (a no-op on Linux, but the API asks for it).
    private static let libraryStatus: Int32 = ares_library_init(ARES_LIB_INIT_ALL)

    init(_ configuration: Configuration) throws {
        guard Self.libraryStatus == ARES_SUCCESS else {
            throw SetupError(description: "c-ares could not start (status \(Self.libraryStatus))")
        }
        var options = ares_options()
        options.flags = ARES_FLAG_NOALIASES
        options.timeout = Int32(clamping: max(configuration.attemptTimeout.nanoseconds / 1_000_000, 1))
        options.tries = Int32(clamping: max(configuration.attempts, 1))
        options.sock_state_cb = { data, socket, readable, writable in
            guard let data else { return }
            let state = Unmanaged<State>.fromOpaque(data).takeUnretainedValue()
            state.interest[socket] = readable == 0 && writable == 0 ? nil : (readable != 0, writable != 0)
        }
        options.sock_state_cb_data = Unmanaged.passUnretained(state).toOpaque()
        let lookups = strdup("b")
        let resolvConf = configuration.resolvConfPath.map { strdup($0) }
        defer {
            free(lookups)
            resolvConf.map { free($0) }
        }
        options.lookups = lookups
        var mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS | ARES_OPT_SOCK_STATE_CB
        if let resolvConf {
            options.resolvconf_path = resolvConf
            mask |= ARES_OPT_RESOLVCONF
        }
        var made: ares_channel?
        let status = ares_init_options(&made, &options, Int32(mask))
        guard status == ARES_SUCCESS, let made else {
            throw SetupError(description: "cannot read the DNS configuration: \(Self.words(status))")
        }
        channel = made
        if !configuration.servers.isEmpty {
            let list = configuration.servers.compactMap(Self.serverText).joined(separator: ",")
            let status = ares_set_servers_ports_csv(channel, list)
            guard status == ARES_SUCCESS else {
                ares_destroy(channel)
                throw SetupError(description: "cannot use the DNS servers \(list): \(Self.words(status))")
            }
        }
    }

    deinit {
        destroy()
    }

    /// Starts looking up `name`'s IPv4 and IPv6 addresses in DNS; `answer` runs on this thread,
    /// inside a later `process` (or inside this call, for a name c-ares refuses at once).
    /// Addresses come in c-ares's order (RFC 6724: the ones this machine can reach first), port 0.
    func lookUp(_ name: String, answer: @escaping (Result<[SocketAddress], NameLookupError>) -> Void) {
        precondition(!destroyed, "lookup on a destroyed c-ares channel")
        state.pending += 1
        var hints = ares_addrinfo_hints()
        hints.ai_family = AF_UNSPEC
        let query = Unmanaged.passRetained(Query(name: name, state: state, answer: answer)).toOpaque()
        ares_getaddrinfo(channel, name, nil, &hints, { arg, status, _, result in
            guard let arg else { return }
            let query = Unmanaged<Query>.fromOpaque(arg).takeRetainedValue()
            query.state.pending -= 1
            defer { result.map { ares_freeaddrinfo($0) } }
            guard status == ARES_SUCCESS else {
                return query.answer(.failure(AresStatus.error(for: status)))
            }
            let addresses = AresChannel.addresses(result, host: query.name)
            query.answer(addresses.isEmpty
                ? .failure(.failed(reason: "the name has no IPv4 or IPv6 address")) : .success(addresses))
        }, query)
    }

    /// Lets c-ares read or write `socket` (as `poll` reported) and handle whatever timed out.
    func process(_ socket: Int32, read: Bool, write: Bool) {
        ares_process_fd(channel, read ? socket : ARES_SOCKET_BAD, write ? socket : ARES_SOCKET_BAD)
    }

    /// Lets c-ares handle queries whose time ran out (retry, next server, or "no answer").
    func processTimeouts() {
        ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD)
    }

    /// Milliseconds until c-ares has a timeout to handle (rounded up), nil when it waits for none.
    func millisecondsUntilTimeout() -> Int32? {
        var buffer = timeval()
        guard let next = ares_timeout(channel, nil, &buffer) else { return nil }
        let milliseconds = Int64(next.pointee.tv_sec) * 1000 + (Int64(next.pointee.tv_usec) + 999) / 1000
        return Int32(clamping: milliseconds)
    }

    /// Ends every query (each answered "shutting down") and closes the channel's sockets.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        ares_destroy(channel)
    }

    /// The IPv4 and IPv6 addresses of a c-ares answer for `host`, in its order, each once.
    private static func addresses(_ result: UnsafeMutablePointer<ares_addrinfo>?, host: String) -> [SocketAddress] {
        var addresses: [SocketAddress] = []
        var node = result?.pointee.nodes
        while let current = node {
            node = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            let converted: SocketAddress
            switch current.pointee.ai_family {
            case AF_INET:
                converted = SocketAddress(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }, host: host)
            case AF_INET6:
                converted = SocketAddress(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }, host: host)
            default:
                continue
            }
            if !addresses.contains(converted) {
                addresses.append(converted)
            }
        }
        return addresses
    }

    /// `IP:PORT` or `[IPv6]:PORT` for `ares_set_servers_ports_csv`.
    private static func serverText(_ address: SocketAddress) -> String? {
        guard let ip = address.ipAddress, let port = address.port else { return nil }
        return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    private static func words(_ status: Int32) -> String {
        switch AresStatus.error(for: status) {
        case .noAnswer: return "no answer"
        case .failed(let reason): return reason
        }
    }
}
