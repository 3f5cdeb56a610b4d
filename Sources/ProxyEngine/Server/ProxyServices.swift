import Logging
import NIOConcurrencyHelpers
import NIOCore
import ProxyCore
import ProxyModel
import Rules

/// The shared, immutable services every client connection uses: configuration, where flows go,
/// how upstream connections are opened and pooled, the rules in force, and the thread pool for
/// the blocking or heavy work rules need (map-local files, body rewrites).
///
/// Built once by `ProxyServer`; handed to each connection's handlers.
final class ProxyServices: Sendable {
    let configuration: ProxyConfiguration
    /// Where flows go (`ShutdownAwareSink` around the sink given).
    let sink: ShutdownAwareSink
    let connector: any UpstreamConnecting
    let pools: UpstreamPools
    /// How many connections the proxy holds at most (from the open-file limit or the flags).
    let budget: ConnectionBudget
    /// Client connections open now, against `budget.maxConnections`.
    let connectionLimit: ConnectionLimit
    /// HTTPS interception; nil means CONNECT is always a byte tunnel.
    let interception: TLSInterception?
    /// The rules file's current rules; each request and tunnel reads it once.
    let rules: LiveRules
    /// Where map-local files are read and large bodies rewritten, off the event loops.
    let blockingWork: any BlockingWork
    let logger: Logger
    /// Refused clients, one rate-limited line each.
    let refusalLog: RefusalLog
    /// `--auth-file` logins, checked on the blocking pool and remembered.
    let passwordVerifier: PasswordHashVerifier
    /// The ports the listener is bound to (set once it is), so a request for the proxy's own
    /// address is answered with its pages instead of looping through itself.
    let listenPorts = NIOLockedValueBox<Set<Int>>([])
    /// What stops at a breakpoint, and what is held there now.
    let breakpoints: Breakpoints
    /// Replays start only while the proxy runs (`FlowReplayer`).
    let replayAdmission = ReplayAdmission()

    /// - Parameter eventLoops: how many loops share the idle upstream budget (one pool each).
    init(configuration: ProxyConfiguration, sink: any FlowSink, connector: any UpstreamConnecting,
         interception: TLSInterception? = nil, rules: LiveRules = LiveRules(),
         blockingWork: any BlockingWork, eventLoops: Int = 1, logger: Logger, breakpoints: Breakpoints = Breakpoints()) {
        self.configuration = configuration
        self.breakpoints = breakpoints
        self.sink = ShutdownAwareSink(sink)
        self.connector = connector
        self.interception = interception
        self.rules = rules
        self.blockingWork = blockingWork
        let budget = ConnectionBudget(
            descriptorLimit: DescriptorLimit.soft, maxConnections: configuration.maxConnections,
            maxIdleUpstream: configuration.maxIdleUpstreamConnections, eventLoops: eventLoops)
        self.budget = budget
        self.connectionLimit = ConnectionLimit(maximum: budget.maxConnections)
        self.pools = UpstreamPools(maxIdlePerKey: configuration.maxIdleUpstreamConnectionsPerOrigin,
                                   maxIdlePerLoop: budget.maxIdleUpstreamPerLoop)
        self.logger = logger
        self.refusalLog = RefusalLog(logger: logger)
        self.passwordVerifier = PasswordHashVerifier(blockingWork: blockingWork)
    }
}

/// Opens upstream connections; a protocol so handler tests can hand out in-memory channels.
protocol UpstreamConnecting: Sendable {
    /// - Parameter addresses: IP literals to connect to instead of resolving `host` (a `dns`
    ///   rule); `host` still names the origin in errors and TLS.
    func connect(
        host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>

    /// As above; with `refusingInternal`, addresses that policy calls internal are not dialled
    /// (a name resolving only to them fails with `ProxyFailure.internalDestination`).
    func connect(
        host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
        refusingInternal: ClientAccessPolicy?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>

    /// As above, through `via` when it is an upstream proxy (`UpstreamProxyRoute`).
    func connect(
        host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
        refusingInternal: ClientAccessPolicy?, via: UpstreamProxy?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>

    /// Resolves `host` as `connect` would, without connecting (SOCKS UDP destinations).
    func resolve(host: String, port: Int, refusingInternal: ClientAccessPolicy?,
                 on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]>
}

extension UpstreamConnecting {
    /// Test connectors dial nothing real: the guard is the real connector's.
    func connect(
        host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
        refusingInternal: ClientAccessPolicy?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        connect(host: host, port: port, addresses: addresses, kind: kind, tls: tls, on: eventLoop)
    }

    /// Test connectors know no upstream proxies.
    func connect(
        host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
        refusingInternal: ClientAccessPolicy?, via: UpstreamProxy?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        connect(host: host, port: port, addresses: addresses, kind: kind, tls: tls, refusingInternal: refusingInternal,
                on: eventLoop)
    }

    /// Test connectors resolve nothing: IP literals only.
    func resolve(host: String, port: Int, refusingInternal: ClientAccessPolicy?,
                 on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        eventLoop.makeCompletedFuture { [try SocketAddress(ipAddress: host, port: port)] }
    }
}

extension UpstreamConnector: UpstreamConnecting {}

/// One `UpstreamConnectionPool` per event loop.
///
/// The lock only guards finding a loop's pool (once per client connection); the pool itself is
/// used only on its own loop. The idle budget is split evenly between the loops rather than
/// shared: a shared count would put a cross-thread operation on every check-in, and making
/// room would mean closing another loop's connection from the wrong thread. Accepted
/// connections are dealt to the loops in turn, so their demand is even.
final class UpstreamPools: Sendable {
    private struct UncheckedPool: @unchecked Sendable {
        let pool: UpstreamConnectionPool
    }

    private let pools = NIOLockedValueBox<[ObjectIdentifier: UncheckedPool]>([:])
    private let maxIdlePerKey: Int
    private let maxIdlePerLoop: Int

    init(maxIdlePerKey: Int, maxIdlePerLoop: Int) {
        self.maxIdlePerKey = maxIdlePerKey
        self.maxIdlePerLoop = maxIdlePerLoop
    }

    /// The pool of `eventLoop`; call it on that loop only.
    func pool(for eventLoop: any EventLoop) -> UpstreamConnectionPool {
        eventLoop.assertInEventLoop()
        let key = ObjectIdentifier(eventLoop)
        return pools.withLockedValue { pools in
            if let existing = pools[key] { return existing.pool }
            let pool = UpstreamConnectionPool(maxIdlePerKey: maxIdlePerKey, maxIdle: maxIdlePerLoop)
            pools[key] = UncheckedPool(pool: pool)
            return pool
        }
    }
}

extension ProxyServices {
    /// Whether `host:port` is this proxy itself: one of its ports on a loopback, unspecified
    /// or own interface address, or `localhost`.
    func isOwnEndpoint(host: String, port: Int) -> Bool {
        guard listenPorts.withLockedValue({ $0.contains(port) }) else { return false }
        let access = configuration.access
        if access.internalAddress(named: host) != nil { return true }
        guard let address = IPAddressBytes(HostName.normalized(host)) else { return false }
        return access.isInternal(address)
    }
}
