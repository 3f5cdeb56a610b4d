import NIOCore
import NIOPosix
import NIOHTTP1
import ProxyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How long the two phases of opening an upstream connection took, in milliseconds (-1: skipped).
struct UpstreamConnectTimings: Sendable {
    var dns: Double
    var connect: Double

    /// A pooled connection: neither phase happened for this exchange.
    static let reused = UpstreamConnectTimings(dns: -1, connect: -1)
}

/// What an upstream channel is for, which decides the handlers it starts with.
enum UpstreamPipelineKind: Sendable {
    /// HTTP/1.1 client handlers and an `UpstreamHTTPHandler`.
    case http
    /// Nothing: bytes, for a tunnel's glue.
    case raw
}

/// Resolves a host and opens a TCP connection to it on a given event loop, turning every failure
/// into a `ProxyFailure` the client can be answered with.
///
/// Addresses are tried in the order the resolver returns them, each with the connect timeout.
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
        host: String, port: Int, kind: UpstreamPipelineKind, on eventLoop: any EventLoop
    ) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)> {
        let started = NIODeadline.now()
        let isLiteral = (try? SocketAddress(ipAddress: host, port: port)) != nil
        return resolver.resolve(host: host, port: port, on: eventLoop)
            .flatMapErrorThrowing { error in
                if error is ProxyFailure { throw error }
                throw ProxyFailure.dnsFailure(host: host, reason: "\(error)")
            }
            .flatMap { addresses in
                let resolved = NIODeadline.now()
                let dns = isLiteral ? -1 : Self.milliseconds(from: started, to: resolved)
                return self.connect(to: addresses[...], host: host, port: port, kind: kind, on: eventLoop, lastError: nil)
                    .map { channel in
                        (channel, UpstreamConnectTimings(dns: dns, connect: Self.milliseconds(from: resolved, to: .now())))
                    }
            }
    }

    private func connect(
        to addresses: ArraySlice<SocketAddress>, host: String, port: Int, kind: UpstreamPipelineKind,
        on eventLoop: any EventLoop, lastError: ProxyFailure?
    ) -> EventLoopFuture<any Channel> {
        guard let address = addresses.first else {
            return eventLoop.makeFailedFuture(lastError ?? .connectFailed(host: host, port: port, reason: "no address"))
        }
        let upstreamTimeout = self.upstreamTimeout
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.maxMessagesPerRead, value: 16)
            .channelOption(.recvAllocator, value: ChannelTuning.receiveAllocator)
            .channelOption(.writeBufferWaterMark, value: ChannelTuning.writeWaterMark)
            .channelOption(.allowRemoteHalfClosure, value: kind == .raw)
            // A raw channel must not read before its glue is in place (server-speaks-first protocols).
            .channelOption(.autoRead, value: kind == .http)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if kind == .http {
                        try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: upstreamTimeout)
                    }
                }
            }
            .connect(to: address)
            .flatMapError { error in
                let failure = self.failure(for: error, host: host, port: port)
                return self.connect(
                    to: addresses.dropFirst(), host: host, port: port, kind: kind, on: eventLoop, lastError: failure)
            }
    }

    private func failure(for error: any Error, host: String, port: Int) -> ProxyFailure {
        switch error {
        case ChannelError.connectTimeout:
            return .connectTimeout(host: host, port: port, seconds: connectTimeout.nanoseconds / 1_000_000_000)
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return .connectionRefused(host: host, port: port)
        case let error as IOError:
            return .connectFailed(host: host, port: port, reason: String(cString: strerror(error.errnoCode)))
        default:
            return .connectFailed(host: host, port: port, reason: "\(error)")
        }
    }

    static func milliseconds(from start: NIODeadline, to end: NIODeadline) -> Double {
        Double((end - start).nanoseconds) / 1_000_000
    }
}
