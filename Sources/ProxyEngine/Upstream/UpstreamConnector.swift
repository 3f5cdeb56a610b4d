import NIOCore
import NIOPosix
import NIOHTTP1
import NIOSSL
import ProxyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How long the phases of opening an upstream connection took, in milliseconds (-1: skipped),
/// and what its TLS handshake established.
struct UpstreamConnectTimings: Sendable {
    var dns: Double
    var connect: Double
    var tls: Double = -1

    /// A pooled connection: no phase happened for this exchange.
    static let reused = UpstreamConnectTimings(dns: -1, connect: -1)
}

/// What an upstream channel is for, which decides the handlers it starts with.
enum UpstreamPipelineKind: Sendable {
    /// HTTP/1.1 client handlers and an `UpstreamHTTPHandler`.
    case http
    /// Nothing: bytes, for a tunnel's glue.
    case raw
}

/// Resolves a host and opens a TCP connection to it on a given event loop (then, for TLS
/// targets, completes the TLS handshake), turning every failure into a `ProxyFailure` the
/// client can be answered with.
///
/// Addresses are tried in the order the resolver returns them, each with the connect timeout;
/// the TLS handshake gets the same timeout again.
/// The channel lives on the caller's event loop so the two halves of an exchange never hop
/// threads.
final class UpstreamConnector: Sendable {
    private let resolver: any HostResolver
    private let connectTimeout: TimeAmount
    private let upstreamTimeout: TimeAmount

    init(resolver: any HostResolver, configuration: ProxyConfiguration) {
        self.resolver = resolver
        self.connectTimeout = configuration.connectTimeout
        self.upstreamTimeout = configuration.upstreamTimeout
    }

    func connect(
        host: String, port: Int, addresses overrides: [String]? = nil, kind: UpstreamPipelineKind,
        tls: UpstreamTLSSettings?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        connect(host: host, port: port, addresses: overrides, kind: kind, tls: tls, refusingInternal: nil, on: eventLoop)
    }

    /// Resolves `host` (normalized) as connections do, for what is not a connection: a SOCKS
    /// UDP relay's destinations. Addresses `refusingInternal` calls internal are left out.
    func resolve(host: String, port: Int, refusingInternal guardPolicy: ClientAccessPolicy?,
                 on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        resolver.resolve(host: host, port: port, on: eventLoop)
            .flatMapErrorThrowing { error in
                if error is ProxyFailure { throw error }
                throw ProxyFailure.dnsFailure(host: host, reason: "\(error)")
            }
            .flatMapThrowing { try Self.droppingInternal($0, host: host, policy: guardPolicy) }
    }

    func connect(
        host: String, port: Int, addresses overrides: [String]? = nil, kind: UpstreamPipelineKind,
        tls: UpstreamTLSSettings?, refusingInternal guardPolicy: ClientAccessPolicy?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        connect(host: host, port: port, addresses: overrides, kind: kind, tls: tls, refusingInternal: guardPolicy,
                via: nil, on: eventLoop)
    }

    /// Opens the connection, through `proxy` when one is given (`UpstreamProxyRoute`).
    func connect(
        host: String, port: Int, addresses overrides: [String]? = nil, kind: UpstreamPipelineKind,
        tls: UpstreamTLSSettings?, refusingInternal guardPolicy: ClientAccessPolicy?, via proxy: UpstreamProxy?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        let started = NIODeadline.now()
        if let proxy {
            let planned = UpstreamProxyRoute.plan(proxy: proxy, host: host, port: port, addresses: overrides,
                                                  tunnels: kind == .raw || tls != nil, guardPolicy: guardPolicy,
                                                  connector: self, on: eventLoop)
            return planned.flatMap { planned in
                let dialled = NIODeadline.now()
                return self.connect(to: planned.proxyAddresses[...], host: proxy.host, port: proxy.port, kind: kind,
                                    tls: tls, through: planned.handshake.map { ($0, host, port) }, on: eventLoop,
                                    lastError: nil)
                    .flatMapErrorThrowing { error in
                        if let failure = error as? ProxyFailure, case .upstreamProxyFailed = failure { throw failure }
                        throw ProxyFailure.upstreamProxyFailed(
                            proxy: proxy.description,
                            reason: (error as? ProxyFailure)?.message ?? SystemErrorText.describe(error, peer: .server))
                    }
                    .flatMap { channel in
                        // No legacy-version probe: it would dial the proxy, not the origin.
                        self.finish(channel, host: host, port: port, tls: tls, probes: false, timings: UpstreamConnectTimings(
                            dns: Self.milliseconds(from: started, to: dialled),
                            connect: Self.milliseconds(from: dialled, to: .now())))
                    }
            }
        }
        let resolved: EventLoopFuture<[SocketAddress]>
        let isLiteral: Bool
        if let overrides {
            // A dns rule: connect to these, whatever the host resolves to (the loader checked
            // they are IP literals).
            isLiteral = true
            resolved = eventLoop.makeCompletedFuture {
                try Self.droppingInternal(overrides.compactMap { try? SocketAddress(ipAddress: $0, port: port) },
                                          host: host, policy: guardPolicy)
            }
        } else {
            isLiteral = (try? SocketAddress(ipAddress: host, port: port)) != nil
            resolved = resolve(host: host, port: port, refusingInternal: guardPolicy, on: eventLoop)
        }
        return resolved
            .flatMap { addresses in
                let resolved = NIODeadline.now()
                let dns = isLiteral ? -1 : Self.milliseconds(from: started, to: resolved)
                return self.connect(to: addresses[...], host: host, port: port, kind: kind, tls: tls, through: nil,
                                    on: eventLoop, lastError: nil)
                    .flatMap { channel in
                        self.finish(channel, host: host, port: port, tls: tls, probes: true, timings: UpstreamConnectTimings(
                            dns: dns, connect: Self.milliseconds(from: resolved, to: .now())))
                    }
            }
    }

    /// The TLS handshake, when there is one, then the channel and its timings.
    private func finish(_ channel: any Channel, host: String, port: Int, tls: UpstreamTLSSettings?, probes: Bool,
                        timings: UpstreamConnectTimings) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        guard let tls else { return channel.eventLoop.makeSucceededFuture((channel, timings)) }
        let connected = NIODeadline.now()
        return awaitHandshake(on: channel, host: host, port: port, tls: tls, probes: probes).map { session in
            var timings = timings
            timings.tls = Self.milliseconds(from: connected, to: .now())
            if let handler = try? channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self) {
                handler.tlsSession = session
            }
            return (channel, timings)
        }
    }

    /// The handshake's outcome, bounded by the connect timeout; the channel is closed on
    /// failure. An origin that refused what we offer is probed for the version it speaks.
    private func awaitHandshake(on channel: any Channel, host: String, port: Int,
                                tls: UpstreamTLSSettings, probes: Bool) -> EventLoopFuture<UpstreamTLSSession> {
        let seconds = connectTimeout.nanoseconds / 1_000_000_000
        let address = channel.remoteAddress
        return UpstreamTLSHandshakeHandler.outcome(on: channel, timeout: connectTimeout)
            .flatMapError { error in
                if error is UpstreamTLSHandshakeHandler.TimedOut {
                    return channel.eventLoop.makeFailedFuture(ProxyFailure.connectTimeout(host: host, port: port, seconds: seconds))
                }
                let failure = UpstreamTLSFailure.failure(for: error, host: host, port: port)
                guard probes, let probe = tls.policy.probeContext, let address, UpstreamTLSFailure.suggestsLegacyOrigin(error) else {
                    return channel.eventLoop.makeFailedFuture(failure)
                }
                let minimum = tls.policy.minimumVersion
                return UpstreamTLSProbe.version(at: address, serverName: tls.serverName, context: probe,
                                                timeout: self.connectTimeout, on: channel.eventLoop)
                    .flatMapThrowing { version in
                        guard let version else { throw failure }
                        throw UpstreamTLSFailure.legacyOrigin(speaking: version, minimum: minimum, host: host, port: port)
                    }
            }
    }

    /// Tries `addresses` in turn; `host` and `port` name them in failures. Through an upstream
    /// proxy (`handshake`), the channel starts with only an `UpstreamProxyTunnelHandler`, and
    /// the protocol's handlers follow once the way is open.
    private func connect(
        to addresses: ArraySlice<SocketAddress>, host: String, port: Int, kind: UpstreamPipelineKind,
        tls: UpstreamTLSSettings?, through tunnel: (handshake: UpstreamProxyHandshake, host: String, port: Int)?,
        on eventLoop: any EventLoop, lastError: ProxyFailure?
    ) -> EventLoopFuture<any Channel> {
        guard let address = addresses.first else {
            return eventLoop.makeFailedFuture(lastError ?? .connectFailed(host: host, port: port, reason: "no address"))
        }
        let upstreamTimeout = self.upstreamTimeout
        let connectTimeout = self.connectTimeout
        let tunnelOpened = tunnel.map { _ in eventLoop.makePromise(of: Void.self) }
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(ChannelTuning.noDelay, value: 1)
            .channelOption(.maxMessagesPerRead, value: ChannelTuning.maxMessagesPerRead)
            .channelOption(.recvAllocator, value: ChannelTuning.receiveAllocator)
            .channelOption(.writeBufferWaterMark, value: ChannelTuning.writeWaterMark)
            .channelOption(.allowRemoteHalfClosure, value: kind == .raw)
            // A raw channel must not read before its glue is in place (server-speaks-first protocols).
            .channelOption(.autoRead, value: kind == .http)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tunnel, let tunnelOpened {
                        try channel.pipeline.syncOperations.addHandler(UpstreamProxyTunnelHandler(
                            handshake: tunnel.handshake, timeout: connectTimeout, opened: tunnelOpened))
                    } else {
                        try Self.installHandlers(on: channel, host: host, port: port, kind: kind, tls: tls,
                                                 upstreamTimeout: upstreamTimeout)
                    }
                }
            }
            .connect(to: address)
            .flatMapError { error in
                tunnelOpened?.fail(error)
                let failure = Self.failure(for: error, host: host, port: port, connectTimeout: self.connectTimeout)
                return self.connect(
                    to: addresses.dropFirst(), host: host, port: port, kind: kind, tls: tls, through: tunnel,
                    on: eventLoop, lastError: failure)
            }
        guard let tunnel, let tunnelOpened else { return connected }
        return connected.flatMap { channel in
            tunnelOpened.futureResult.flatMapThrowing {
                try Self.installHandlers(on: channel, host: tunnel.host, port: tunnel.port, kind: kind, tls: tls,
                                         upstreamTimeout: upstreamTimeout)
                return channel
            }
            .flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
    }

    /// The handlers a connection starts with: TLS (HTTP waits for its ALPN), HTTP/1, or none.
    private static func installHandlers(on channel: any Channel, host: String, port: Int, kind: UpstreamPipelineKind,
                                        tls: UpstreamTLSSettings?, upstreamTimeout: TimeAmount) throws {
                    if let tls {
                        let pipeline = channel.pipeline.syncOperations
                        let log = tls.policy.verifiesCertificates ? UpstreamVerificationLog() : nil
                        try ChannelTuning.boundTLSReads(on: channel)
                        try pipeline.addHandler(
                            UpstreamVerificationLog.clientHandler(context: tls.context, serverName: tls.serverName, log: log))
                        // HTTP waits for ALPN: the origin may choose HTTP/2.
                        let installHTTP: ((UpstreamTLSSession) throws -> Void)? = kind == .http ? { session in
                            if session.applicationProtocol == "h2" {
                                try UpstreamHTTP2Connection.install(on: channel, streamTimeout: upstreamTimeout,
                                                                    tlsSession: session)
                            } else {
                                try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations,
                                                                        timeout: upstreamTimeout)
                            }
                        } : nil
                        try pipeline.addHandler(UpstreamTLSHandshakeHandler(
                            promise: channel.eventLoop.makePromise(of: UpstreamTLSSession.self),
                            checkedName: tls.serverName ?? host, verification: log, installProtocol: installHTTP))
                        try pipeline.addHandler(UpstreamTLSAlertTranslator(host: host, port: port))
                    } else if kind == .http {
                        try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: upstreamTimeout)
                    }
    }

    /// `addresses` without those `policy` keeps a guarded client from (all of them when there is
    /// no policy); none left is a 403 naming the first refused.
    static func droppingInternal(_ addresses: [SocketAddress], host: String,
                                 policy: ClientAccessPolicy?) throws -> [SocketAddress] {
        guard let policy else { return addresses }
        var refused: IPAddressBytes?
        let kept = addresses.filter { address in
            guard let ip = address.ipAddress, let bytes = IPAddressBytes(ip), policy.isInternal(bytes) else { return true }
            if refused == nil { refused = bytes }
            return false
        }
        if kept.isEmpty, let refused {
            throw ProxyFailure.internalDestination(host: host, address: refused.description)
        }
        return kept
    }

    /// A failed connect in words (never NIO's own error text on a flow).
    static func failure(for error: any Error, host: String, port: Int, connectTimeout: TimeAmount) -> ProxyFailure {
        switch error {
        case EventLoopError.shutdown, EventLoopError.shutdownFailed:
            // A request retried on a fresh connection while the proxy stops.
            return .connectFailed(host: host, port: port, reason: "the proxy is shutting down")
        case ChannelError.connectTimeout:
            return .connectTimeout(host: host, port: port, seconds: connectTimeout.nanoseconds / 1_000_000_000)
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return .connectionRefused(host: host, port: port)
        default:
            return .connectFailed(host: host, port: port, reason: SystemErrorText.describe(error, peer: .server))
        }
    }

    static func milliseconds(from start: NIODeadline, to end: NIODeadline) -> Double {
        Double((end - start).nanoseconds) / 1_000_000
    }
}
