import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
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
    private let serverChannels = NIOLockedValueBox<[any Channel]>([])
    private let boundAddresses = NIOLockedValueBox<[SocketAddress]>([])
    private let boundReverseAddresses = NIOLockedValueBox<[SocketAddress]>([])

    /// - Parameters:
    ///   - resolver: resolves upstream host names (`SystemHostResolver`: c-ares on a thread of its own).
    ///   - interception: HTTPS interception (root CA leaves, upstream TLS, pins); nil keeps
    ///     every CONNECT a byte tunnel.
    ///   - rules: the rules in force (block, map-local, map-remote, dns, rewrite, upstream proxy, SSL-proxying
    ///     lists); swapped by whoever reloads the rules file.
    ///   - blockingPool: runs map-local file reads and large body rewrites off the event loops
    ///     (never DNS lookups, which the resolver runs on a thread of its own).
    public init(configuration: ProxyConfiguration, sink: any FlowSink, group: any EventLoopGroup,
                resolver: any HostResolver, interception: TLSInterception? = nil, rules: LiveRules = LiveRules(),
                blockingPool: BlockingPool, logger: Logger, breakpoints: Breakpoints = Breakpoints()) {
        self.group = group
        self.services = ProxyServices(
            configuration: configuration, sink: sink,
            connector: UpstreamConnector(resolver: resolver, configuration: configuration),
            interception: interception, rules: rules, blockingWork: blockingPool,
            eventLoops: Array(group.makeIterator()).count, logger: logger, breakpoints: breakpoints)
    }

    /// The breakpoints this proxy stops exchanges at (set a filter, list and decide holds).
    public var breakpoints: Breakpoints { services.breakpoints }

    /// The connection limits in force (from the configuration and the open-file limit).
    public var budget: ConnectionBudget { services.budget }

    /// Binds every listen address and starts accepting; returns the first bound address
    /// (useful with port 0). Further addresses with port 0 take the first one's port. When one
    /// cannot be bound, those bound already are closed and the error is thrown.
    public func start() async throws -> SocketAddress {
        let configuration = services.configuration
        let first = try await bind(host: configuration.listenHost, port: configuration.listenPort)
        var bound = [first]
        for endpoint in configuration.additionalListenAddresses {
            let port = endpoint.port == 0 ? first.port ?? 0 : endpoint.port
            do {
                bound.append(try await bind(host: endpoint.host, port: port))
            } catch {
                await closeListeners()
                throw ListenError(host: endpoint.host, port: port, underlying: error)
            }
        }
        var reverseBound: [SocketAddress] = []
        for mapping in configuration.reverse {
            do {
                let tls = mapping.tls ? try await reverseTLSContext(for: mapping) : nil
                reverseBound.append(try await bind(host: mapping.listen.host, port: mapping.listen.port,
                                                   reverse: mapping, tls: tls))
            } catch {
                await closeListeners()
                throw ListenError(host: mapping.listen.host, port: mapping.listen.port, underlying: error)
            }
        }
        services.listenPorts.withLockedValue { ports in
            for address in bound + reverseBound { if let port = address.port { ports.insert(port) } }
        }
        boundAddresses.withLockedValue { $0 = bound }
        boundReverseAddresses.withLockedValue { $0 = reverseBound }
        return first
    }

    /// Sends requests through this engine without a client connection (replays, composed
    /// requests); `ignoresRules` forwards them as they are (`--no-rules`).
    public func replayer(ignoresRules: Bool = false) -> FlowReplayer {
        FlowReplayer(services: services, group: group, ignoresRules: ignoresRules)
    }

    /// The address each `--reverse` listener is bound to, in the order of the configuration.
    public var reverseAddresses: [SocketAddress] { boundReverseAddresses.withLockedValue { $0 } }

    /// Every address bound, in the order of the configuration.
    public var addresses: [SocketAddress] { boundAddresses.withLockedValue { $0 } }

    /// The server side of a `--reverse-tls` listener: a leaf for the origin's name, HTTP/1.1.
    private func reverseTLSContext(for mapping: ReverseMapping) async throws -> NIOSSLContext {
        guard let interception = services.interception else {
            throw ReverseTLSUnavailable()
        }
        let identity = try await withCheckedThrowingContinuation { continuation in
            interception.identities.identity(forHost: mapping.host) { continuation.resume(with: $0) }
        }
        return try TLSInterception.serverContext(for: identity, minimumVersion: interception.clientMinimumVersion,
                                                 protocols: ["http/1.1"])
    }

    private func bind(host: String, port: Int, reverse: ReverseMapping? = nil,
                      tls: NIOSSLContext? = nil) async throws -> SocketAddress {
        let services = self.services
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
            .childChannelOption(.maxMessagesPerRead, value: ChannelTuning.maxMessagesPerRead)
            .childChannelOption(.recvAllocator, value: ChannelTuning.receiveAllocator)
            .childChannelOption(.writeBufferWaterMark, value: ChannelTuning.writeWaterMark)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ClientPipelineSetup.configureAccepted(channel, services: services, reverse: reverse, tls: tls)
                }
            }
            .bind(host: host, port: port)
            .get()
        serverChannels.withLockedValue { $0.append(channel) }
        guard let address = channel.localAddress else {
            throw ChannelError.unknownLocalAddress
        }
        return address
    }

    /// Stops accepting connections. Established connections end with the event loop group; the
    /// flows of exchanges cut short from now on say the proxy was shut down.
    public func stop() async throws {
        services.sink.stop()
        await services.replayAdmission.close()
        await closeListeners()
    }

    private func closeListeners() async {
        let channels = serverChannels.withLockedValue { channels -> [any Channel] in
            defer { channels = [] }
            return channels
        }
        for channel in channels { try? await channel.close() }
    }
}

/// An additional listen address could not be bound: which one, and the system's error (the
/// CLI puts it in words with `ListenFailure`).
public struct ListenError: Error {
    public let host: String
    public let port: Int
    public let underlying: any Error
}

/// `--reverse-tls` without HTTPS interception: there is no root CA to mint the listener's leaf.
public struct ReverseTLSUnavailable: Error, CustomStringConvertible {
    public var description: String {
        "--reverse-tls needs the root CA of HTTPS interception: run without --no-intercept"
    }
}
