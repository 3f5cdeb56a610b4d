import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ProxyModel
import Rules

/// The listening proxy: binds the address, gives every accepted connection its pipeline, and
/// shuts down cleanly.
///
/// It does not own the event loop group or the flow sink: the composition root (the CLI, or a
/// test) creates those, so their lifetimes are explicit.
public final class ProxyServer: Sendable {
    private let services: ProxyServices
    private let group: any EventLoopGroup
    private let serverChannel = NIOLockedValueBox<(any Channel)?>(nil)

    /// - Parameters:
    ///   - resolver: resolves upstream host names (`SystemHostResolver`: c-ares on a thread of its own).
    ///   - interception: HTTPS interception (root CA leaves, upstream TLS, pins); nil keeps
    ///     every CONNECT a byte tunnel.
    ///   - rules: the rules in force (block, map-local, map-remote, dns, rewrite, SSL-proxying
    ///     lists); swapped by whoever reloads the rules file.
    ///   - blockingPool: runs map-local file reads and large body rewrites off the event loops
    ///     (never DNS lookups, which the resolver runs on a thread of its own).
    public init(configuration: ProxyConfiguration, sink: any FlowSink, group: any EventLoopGroup,
                resolver: any HostResolver, interception: TLSInterception? = nil, rules: LiveRules = LiveRules(),
                blockingPool: BlockingPool, logger: Logger) {
        self.group = group
        self.services = ProxyServices(
            configuration: configuration, sink: sink,
            connector: UpstreamConnector(resolver: resolver, configuration: configuration),
            interception: interception, rules: rules, blockingWork: blockingPool,
            eventLoops: Array(group.makeIterator()).count, logger: logger)
    }

    /// The connection limits in force (from the configuration and the open-file limit).
    public var budget: ConnectionBudget { services.budget }

    /// Binds and starts accepting; returns the bound address (useful with port 0).
    public func start() async throws -> SocketAddress {
        let services = self.services
        let configuration = services.configuration
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(logger: services.logger))
                }
            }
            .childChannelOption(ChannelTuning.noDelay, value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelOption(.recvAllocator, value: ChannelTuning.receiveAllocator)
            .childChannelOption(.writeBufferWaterMark, value: ChannelTuning.writeWaterMark)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ClientPipelineSetup.configureAccepted(channel, services: services)
                }
            }
            .bind(host: configuration.listenHost, port: configuration.listenPort)
            .get()
        serverChannel.withLockedValue { $0 = channel }
        guard let address = channel.localAddress else {
            throw ChannelError.unknownLocalAddress
        }
        return address
    }

    /// Stops accepting connections. Established connections end with the event loop group; the
    /// flows of exchanges cut short from now on say the proxy was shut down.
    public func stop() async throws {
        services.sink.stop()
        let channel = serverChannel.withLockedValue { channel -> (any Channel)? in
            defer { channel = nil }
            return channel
        }
        try await channel?.close()
    }
}
