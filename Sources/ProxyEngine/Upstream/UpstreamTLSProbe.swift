import NIOCore
import NIOPosix
import NIOSSL
import ProxyCore

/// Finds out which TLS version an origin speaks after it refused our handshake, so the 502 can
/// say "origin offers only TLS 1.0" and name the flag that allows it.
///
/// An origin that supports nothing we offer usually answers with a bare `protocol_version` or
/// `handshake_failure` alert, which says nothing about what it does support. The probe connects
/// once more to the same address with `UpstreamTLSPolicy`'s probe context (every version down
/// to TLS 1.0, legacy cipher suites, no verification), completes a handshake, reads the version
/// and closes: it sends no request and nothing it learns is trusted. It runs only on that
/// failure path, bounded by the connect timeout.
enum UpstreamTLSProbe {
    /// The version the origin at `address` negotiates with `context`; nil when that fails too.
    static func version(at address: SocketAddress, serverName: String?, context: NIOSSLContext, timeout: TimeAmount,
                        on eventLoop: any EventLoop) -> EventLoopFuture<TLSProtocolVersion?> {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                    try pipeline.addHandler(UpstreamTLSHandshakeHandler(
                        promise: channel.eventLoop.makePromise(of: UpstreamTLSSession.self), checkedName: serverName ?? ""))
                }
            }
            .connect(to: address)
            .flatMap { channel in
                UpstreamTLSHandshakeHandler.outcome(on: channel, timeout: timeout)
                    .map { session in
                        channel.close(promise: nil)
                        return session.protocolVersion
                    }
            }
            .recover { _ in nil }
    }
}
