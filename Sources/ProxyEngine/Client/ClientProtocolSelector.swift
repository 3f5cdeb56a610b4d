import NIOCore
import NIOTLS

/// Waits, right after the client's TLS handler, for the handshake to finish and then sets the
/// connection up for the HTTP version the client and the proxy agreed on (ALPN): `h2` gets an
/// HTTP/2 server (`ClientHTTP2Setup`), anything else the HTTP/1 handlers (`ClientPipelineSetup`).
/// It leaves once it has done so.
///
/// A client that never finishes its handshake is closed after the client idle timeout, as an
/// HTTP/1 connection that never sends a request would be. Decrypted bytes arriving before the
/// handlers are in place (none should: NIOSSL reports the handshake first) are kept and passed
/// on to them.
final class ClientProtocolSelector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let services: ProxyServices
    private let tunnel: ClientHTTPHandler.TunnelDestination
    private var deadline = DeadlineTimer()
    private var held: [NIOAny] = []
    private var configured = false

    init(services: ProxyServices, tunnel: ClientHTTPHandler.TunnelDestination) {
        self.services = services
        self.tunnel = tunnel
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop
        deadline.schedule(at: loop.now + services.configuration.clientIdleTimeout, on: loop) { [weak self] in
            guard let self, !self.configured else { return }
            self.tunnel.tls?.closeRequested = true
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if configured {
            context.fireChannelRead(data)
        } else {
            held.append(data)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case TLSUserEvent.handshakeCompleted(let negotiated) = event, !configured else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        configured = true
        deadline.cancel()
        do {
            if negotiated == "h2" {
                try ClientHTTP2Setup.configure(context.channel, services: services, tunnel: tunnel)
            } else {
                try ClientPipelineSetup.configure(context.channel, services: services, tunnel: tunnel)
            }
        } catch {
            tunnel.tls?.closeRequested = true
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
        let held = held
        self.held = []
        for data in held { context.fireChannelRead(data) }
        if !held.isEmpty { context.fireChannelReadComplete() }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
