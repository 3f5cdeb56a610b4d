import NIOCore
import ProxyCore
import NIOSOCKS

/// Tells, from a listener connection's first bytes, whether the client speaks SOCKS5 (first byte
/// `0x05`), SOCKS4 (`0x04`, refused with its own reply), HTTP/2 with prior knowledge (h2c: the
/// 24-byte connection preface `PRI * HTTP/2.0␍␊␍␊SM␍␊␍␊`) or HTTP/1, and installs that protocol's
/// handlers (`SOCKSFrontHandler`, `ClientHTTP2Setup` or `ClientPipelineSetup`), then leaves.
/// No HTTP request starts with a byte below 0x20, so one port serves all of them.
///
/// An HTTP/1 request differs from the preface at its first or second byte (`GET`, `POST`,
/// `CONNECT`…), so HTTP/1 clients are decided at once; at most the preface's 24 bytes are ever
/// held. A client that sends a prefix of the preface and then nothing is closed after the client
/// idle timeout, as an idle HTTP/1 connection would be: it never holds its slot for good.
///
/// Over h2c each stream is a request to the proxy itself (its built-in pages: the CA download) —
/// the ground for reverse-proxy use. Forward proxying over HTTP/2 goes through CONNECT.
final class ListenerPrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private let services: ProxyServices
    private var seen: ByteBuffer?
    private var timer = DeadlineTimer()
    private var decided = false

    /// HTTP/2 with prior knowledge is recognised (off with `--no-http2`: the preface then goes to
    /// the HTTP/1 parser, which refuses it).
    private let allowsHTTP2: Bool

    init(services: ProxyServices) {
        self.services = services
        self.allowsHTTP2 = services.interception?.offersHTTP2 ?? true
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let deadline = context.eventLoop.now + services.configuration.clientIdleTimeout
        timer.schedule(at: deadline, on: context.eventLoop) { [weak context] in context?.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else { return context.fireChannelRead(data) }
        var buffer = unwrapInboundIn(data)
        if var held = seen {
            held.writeBuffer(&buffer)
            seen = held
        } else {
            seen = buffer
        }
        guard let held = seen else { return }
        let match = Self.match(held.readableBytesView)
        switch match {
        case .undecided:
            return
        case .http2 where !allowsHTTP2:
            decide(context: context, .http1)
        default:
            decide(context: context, match)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        context.fireChannelInactive()
    }

    /// Before a protocol is chosen, the client leaving (end of input, a reset) ends the connection
    /// as the HTTP/1 handlers would have.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !decided, let event = event as? ChannelEvent, case .inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !decided else { return context.fireErrorCaught(error) }
        context.close(promise: nil)
    }

    enum Match: Equatable { case undecided, http1, http2, socks5, socks4 }

    /// What `bytes` (the connection's first bytes) say: SOCKS by its version byte, the whole
    /// preface, something else, or a prefix of the preface so far.
    static func match(_ bytes: some Collection<UInt8>) -> Match {
        switch bytes.first {
        case 0x05?: return .socks5
        case 0x04?: return .socks4
        default: break
        }
        for (byte, expected) in zip(bytes, preface) where byte != expected {
            return .http1
        }
        return bytes.count >= preface.count ? .http2 : .undecided
    }

    private func decide(context: ChannelHandlerContext, _ match: Match) {
        decided = true
        timer.cancel()
        do {
            switch match {
            case .http2:
                try ClientHTTP2Setup.configure(context.channel, services: services, tunnel: nil)
            case .socks5:
                try context.pipeline.syncOperations.addHandlers([SOCKSServerHandshakeHandler(),
                                                                 SOCKSFrontHandler(services: services)])
            case .socks4:
                services.refusalLog.note("refused a SOCKS4 client from \(context.channel.remoteAddress?.ipAddress ?? "?"): "
                                         + "only SOCKS5 is served")
                seen = nil
                let channel = context.channel
                context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: SOCKSRefusal.socks4Rejected)))
                    .whenComplete { _ in channel.close(promise: nil) }
                return
            case .http1, .undecided:
                try ClientPipelineSetup.configure(context.channel, services: services)
            }
        } catch {
            context.close(promise: nil)
            return
        }
        let held = seen
        seen = nil
        // Handed on before leaving: a removed handler's context no longer reaches the next one.
        if let held {
            context.fireChannelRead(wrapInboundOut(held))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
