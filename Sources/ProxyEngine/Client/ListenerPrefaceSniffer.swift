import NIOCore

/// Tells, from a listener connection's first bytes, whether the client speaks HTTP/2 with prior
/// knowledge (h2c: the 24-byte connection preface `PRI * HTTP/2.0␍␊␍␊SM␍␊␍␊`) or HTTP/1, and
/// installs that protocol's handlers (`ClientHTTP2Setup` or `ClientPipelineSetup`), then leaves.
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

    init(services: ProxyServices) {
        self.services = services
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
        switch Self.match(held.readableBytesView) {
        case .undecided:
            return
        case .http2:
            decide(context: context, http2: true)
        case .http1:
            decide(context: context, http2: false)
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

    enum Match: Equatable { case undecided, http1, http2 }

    /// What `bytes` (the connection's first bytes) say: the whole preface, something else, or a
    /// prefix of the preface so far.
    static func match(_ bytes: some Collection<UInt8>) -> Match {
        for (byte, expected) in zip(bytes, preface) where byte != expected {
            return .http1
        }
        return bytes.count >= preface.count ? .http2 : .undecided
    }

    private func decide(context: ChannelHandlerContext, http2: Bool) {
        decided = true
        timer.cancel()
        do {
            if http2 {
                try ClientHTTP2Setup.configure(context.channel, services: services, tunnel: nil)
            } else {
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
