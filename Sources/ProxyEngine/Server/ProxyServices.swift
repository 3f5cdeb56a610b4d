import Logging
import NIOConcurrencyHelpers
import NIOCore
import ProxyModel

/// The shared, immutable services every client connection uses: configuration, where flows go,
/// how upstream connections are opened and pooled.
///
/// Built once by `ProxyServer`; handed to each connection's handlers.
final class ProxyServices: Sendable {
    let configuration: ProxyConfiguration
    let sink: any FlowSink
    let connector: any UpstreamConnecting
    let pools: UpstreamPools
    /// HTTPS interception; nil means CONNECT is always a byte tunnel.
    let interception: TLSInterception?
    let logger: Logger

    init(configuration: ProxyConfiguration, sink: any FlowSink, connector: any UpstreamConnecting,
         interception: TLSInterception? = nil, logger: Logger) {
        self.configuration = configuration
        self.sink = sink
        self.connector = connector
        self.interception = interception
        self.pools = UpstreamPools(maxIdlePerKey: configuration.maxIdleUpstreamConnectionsPerOrigin)
        self.logger = logger
    }
}

/// Opens upstream connections; a protocol so handler tests can hand out in-memory channels.
protocol UpstreamConnecting: Sendable {
    func connect(
        host: String, port: Int, kind: UpstreamPipelineKind, tls: UpstreamTLSTarget?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>
}

extension UpstreamConnector: UpstreamConnecting {}

/// One `UpstreamConnectionPool` per event loop.
///
/// The lock only guards finding a loop's pool (once per client connection); the pool itself is
/// used only on its own loop.
final class UpstreamPools: Sendable {
    private struct UncheckedPool: @unchecked Sendable {
        let pool: UpstreamConnectionPool
    }

    private let pools = NIOLockedValueBox<[ObjectIdentifier: UncheckedPool]>([:])
    private let maxIdlePerKey: Int

    init(maxIdlePerKey: Int) {
        self.maxIdlePerKey = maxIdlePerKey
    }

    /// The pool of `eventLoop`; call it on that loop only.
    func pool(for eventLoop: any EventLoop) -> UpstreamConnectionPool {
        eventLoop.assertInEventLoop()
        let key = ObjectIdentifier(eventLoop)
        return pools.withLockedValue { pools in
            if let existing = pools[key] { return existing.pool }
            let pool = UpstreamConnectionPool(maxIdlePerKey: maxIdlePerKey)
            pools[key] = UncheckedPool(pool: pool)
            return pool
        }
    }
}
