import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import ProxyCore
import ProxyModel
import Rules

/// The last handler of a client connection: reads each request, decides what it is (a proxy
/// request, a CONNECT, or a request for the proxy itself) and hands it to the object that
/// carries it out, then answers on the client side.
///
/// It owns the client half of every exchange: writing responses, holding reads while the
/// upstream side cannot keep up, closing at the right time, and answering every failure with a
/// status code and a one-line reason. `HTTPServerPipelineHandler` in front of it guarantees one
/// request at a time, so pipelined requests are answered in order. Its counterpart on the
/// upstream side is `UpstreamHTTPHandler`.
final class ClientHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler, ExchangeClientSide {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Why client reads are held; reads resume when no reason is left.
    struct PauseReasons: OptionSet {
        let rawValue: UInt8
        static let connecting = PauseReasons(rawValue: 1)
        static let upstreamBusy = PauseReasons(rawValue: 2)
        static let authenticating = PauseReasons(rawValue: 4)
    }

    /// Set only by this handler and its extensions (dispatch, answers).
    enum State {
        case idle
        /// A request forwarded or answered by the proxy itself (block, map-local).
        case exchange(ExchangeDriver)
        case tunnelling(ConnectTunnel)
        /// Its `--auth-file` login is being checked (reads paused); what was read meanwhile waits.
        case authenticating(HTTPRequestHead, held: [HTTPServerRequestPart])
        /// Answered already; the rest of this request is read and dropped.
        case draining
        /// Closing, or handed over to a byte relay.
        case done
    }

    /// Where the requests of a CONNECT tunnel carrying HTTP go: the tunnel's target, over TLS
    /// when the client's TLS was terminated here.
    struct TunnelDestination {
        var scheme: String
        var host: String
        var port: Int
        /// The client side's TLS (nil for plain HTTP inside the tunnel).
        var tls: ClientTLSState?
    }

    let services: ProxyServices
    let tunnel: TunnelDestination?
    /// On a `--reverse` listener: the origin every request goes to.
    let reverse: ReverseMapping?
    /// On a replay's in-process connection (`FlowReplayer`): what the replay asked for.
    let replay: ReplaySettings?
    var state: State = .idle
    private(set) var context: ChannelHandlerContext?
    private(set) var pool: UpstreamConnectionPool?
    /// Upstream connections an origin bound to this client's login (NTLM, Negotiate).
    let privateUpstreams = PrivateUpstreamConnections()
    private var pauseReasons: PauseReasons = []
    /// An upload pace was set on this connection (`paceUploads`): later requests set theirs.
    private var uploadsPaced = false
    /// The verdict on an `--auth-file` login just checked, for the request it was checked for.
    var checkedLogin: ProxyAuthenticationOutcome?
    private var readPending = false
    private var idleTimer = DeadlineTimer()
    /// When the connection last became idle (no request in flight); nil while busy.
    var idleSince: NIODeadline?
    /// When the client last sent anything: a request body that stops arriving times out.
    private var lastClientActivity = NIODeadline.uptimeNanoseconds(0)
    private(set) var inputClosed = false
    private(set) var clientAddress = ""
    /// The client's IP (nil when the system gave none); decides admission and the guard.
    private(set) var clientIP: IPAddressBytes?
    /// Set for a client from another machine without `--allow-internal`.
    private(set) var destinationGuard: ClientAccessPolicy?

    init(services: ProxyServices, tunnel: TunnelDestination? = nil, reverse: ReverseMapping? = nil,
         replay: ReplaySettings? = nil) {
        self.services = services
        self.tunnel = tunnel
        self.reverse = reverse
        self.replay = replay
    }

    var ignoresRules: Bool { replay?.ignoresRules ?? false }

    /// A throttle's upload rate, paced on the client's connection (an HTTP/2 stream's parent):
    /// requests on one connection come one at a time, so each sets the pace for what follows.
    func paceUploads(bytesPerSecond: Int?, isStream: Bool) {
        guard bytesPerSecond != nil || uploadsPaced, let channel = context?.channel else { return }
        uploadsPaced = true
        // A TCP connection's parent is the listening socket (another loop): only a stream's is its connection.
        let connection = isStream ? channel.parent ?? channel : channel
        ThrottledReads.pace(connection, bytesPerSecond: bytesPerSecond, closesOnEndOfInput: false)
    }

    var eventLoop: any EventLoop { context!.eventLoop }
    var channel: (any Channel)? { context?.channel }

    func releaseReadBuffers() {
        if let channel = context?.channel { ChannelTuning.releaseReadBuffers(on: channel) }
    }
    var isWritable: Bool { context?.channel.isWritable ?? false }
    var allocator: ByteBufferAllocator { context?.channel.allocator ?? ByteBufferAllocator() }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.pool = services.pools.pool(for: context.eventLoop)
        if replay != nil {
            clientAddress = ReplaySettings.clientAddress
        } else if let remote = context.channel.remoteAddress, let ip = remote.ipAddress, let port = remote.port {
            clientAddress = ip.utf8.contains(UInt8(ascii: ":")) ? "[\(ip)]:\(port)" : "\(ip):\(port)"
            // Loopback clients (nearly all) skip the parse: no guard, nothing to admit.
            if !ip.hasPrefix("127.") && ip != "::1" {
                clientIP = IPAddressBytes(ip)
                let access = services.configuration.access
                if access.guardsDestinations(forClient: clientIP) { destinationGuard = access }
            }
        }
        becameIdle()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer.cancel()
        privateUpstreams.closeAll()
        self.context = nil
    }

    // MARK: idle timeout

    private func becameIdle() {
        guard let context else { return }
        let now = context.eventLoop.now
        idleSince = now
        if !idleTimerArmed {
            idleTimerArmed = true
            idleTimer.schedule(at: now + services.configuration.clientIdleTimeout, on: context.eventLoop) { self.idleTimerFired() }
        }
    }

    private var idleTimerArmed = false

    /// Closes a connection idle for the whole timeout (no request, or only the rest of an
    /// answered request's body trickling in), fails an exchange whose request body stopped
    /// moving, and otherwise looks again when one of those could be due.
    private func idleTimerFired() {
        idleTimerArmed = false
        guard let context else { return }
        let timeout = services.configuration.clientIdleTimeout
        let now = context.eventLoop.now
        var next = now + timeout
        switch state {
        case .idle:
            if let idleSince {
                if now - idleSince >= timeout {
                    state = .done
                    tunnel?.tls?.closeRequested = true
                    context.close(promise: nil)
                    return
                }
                next = idleSince + timeout
            }
        case .draining:
            if now - lastClientActivity >= timeout {
                abortConnection()
                return
            }
            next = lastClientActivity + timeout
        case .authenticating:
            // Bounded by the verifier (a few checks at a time, each at most cost 16).
            break
        case .exchange(let exchange) where exchange.awaitsClientBody:
            if now - lastClientActivity >= timeout {
                exchange.requestStalled(seconds: timeout.nanoseconds / 1_000_000_000)
                if self.context == nil { return }
            } else {
                next = lastClientActivity + timeout
            }
        case .exchange(let exchange) where exchange.isWritingLocalAnswer:
            // A streamed map-local file: the client must keep taking it.
            if let progress = exchange.lastWriteProgress {
                if now - progress >= timeout {
                    exchange.writeStalled(seconds: timeout.nanoseconds / 1_000_000_000)
                    if self.context == nil { return }
                } else {
                    next = progress + timeout
                }
            }
        case .exchange, .tunnelling, .done:
            break
        }
        idleTimerArmed = true
        idleTimer.schedule(at: next, on: context.eventLoop) { self.idleTimerFired() }
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastClientActivity = context.eventLoop.now
        handle(unwrapInboundIn(data), context: context)
    }

    func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if case .authenticating(let head, var held) = state {
            held.append(part)
            state = .authenticating(head, held: held)
            return
        }
        switch part {
        case .head(let head):
            startRequest(head)
        case .body(let buffer):
            if case .exchange(let exchange) = state {
                exchange.clientBody(buffer)
            }
        case .end(let trailers):
            switch state {
            case .exchange(let exchange):
                exchange.clientEnd(trailers)
            case .tunnelling(let tunnel):
                tunnel.clientRequestEnded()
            case .draining:
                state = .idle
                becameIdle()
                if inputClosed { context.close(promise: nil) }
            case .idle, .done, .authenticating:
                break
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .exchange(let exchange) = state {
            exchange.clientReadComplete()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Only a client taking bytes again matters here: one that stops is noticed when a
        // response part is written (`ExchangeDriver.relayResponseBody`).
        if case .exchange(let exchange) = state, context.channel.isWritable {
            exchange.clientWritabilityChanged(isWritable: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer.cancel()
        privateUpstreams.closeAll()
        let previous = state
        state = .done
        switch previous {
        case .exchange(let exchange): exchange.clientClosed()
        case .tunnelling(let tunnel): tunnel.clientClosed()
        default: break
        }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            inputClosed = true
            switch state {
            case .idle:
                state = .done
                context.close(promise: nil)
            case .exchange(let exchange):
                exchange.clientInputClosed()
            default:
                break
            }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let reset = error as? NIOHTTP2Errors.StreamClosed {
            // The client reset this HTTP/2 stream: its exchange ends, the connection's others go on.
            abortConnection(reason: "the client reset the stream (\(HTTP2ErrorText.name(of: reset.errorCode)))")
            return
        }
        guard let parserError = error as? HTTPParserError else {
            // Resets and other I/O errors: nothing to answer.
            context.close(promise: nil)
            return
        }
        let failure: ProxyFailure
        if case .headerOverflow = parserError {
            failure = .headersTooLarge(limit: services.configuration.maxRequestHeaderBytes)
        } else {
            failure = .badRequest(reason: "malformed request: \(parserError.reason)")
        }
        // Whatever happens, nothing after this on the connection can be trusted: it closes.
        switch state {
        case .idle, .draining:
            answer(failure, version: .http1_1, keepAlive: false, requestEnded: true)
        case .exchange(let exchange):
            exchange.requestFailed(failure)
        case .tunnelling, .authenticating:
            abortConnection(reason: "the client sent a malformed request: \(parserError.reason)")
        case .done:
            // Closing after the last response (the parser refuses anything after a request that
            // said `Connection: close`, and that refusal arrives from inside the write of the
            // response's `.end`, before its flush): the close under way must not be hurried, or
            // the response would be discarded unsent.
            break
        }
    }

    // MARK: outbound: back-pressure on client reads

    func read(context: ChannelHandlerContext) {
        if pauseReasons.isEmpty {
            context.read()
        } else {
            readPending = true
        }
    }

    func setReadsPaused(_ paused: Bool, by pause: ClientReadPause) {
        switch pause {
        case .connecting: setReadsPaused(paused, reason: .connecting)
        case .upstreamBusy: setReadsPaused(paused, reason: .upstreamBusy)
        }
    }

    /// Reads wait while an `--auth-file` login is checked.
    func setReadsPausedForLogin(_ paused: Bool) {
        setReadsPaused(paused, reason: .authenticating)
    }

    private func setReadsPaused(_ paused: Bool, reason: PauseReasons) {
        if paused {
            pauseReasons.insert(reason)
        } else {
            pauseReasons.remove(reason)
            if pauseReasons.isEmpty && readPending, let context {
                readPending = false
                context.read()
            }
        }
    }

    // MARK: answering (called by exchanges and tunnels)

    func write(_ part: HTTPServerResponsePart) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    /// Writes and flushes `part`; the future completes once it is written (back-pressure for
    /// answers the proxy streams itself, such as map-local files).
    func writeAndFlush(_ part: HTTPServerResponsePart) -> EventLoopFuture<Void> {
        guard let context else {
            return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        return context.writeAndFlush(wrapOutboundOut(part))
    }

    func flush() {
        context?.flush()
    }

    /// Ends the current response; what happens next depends on whether the client's request has
    /// been read to its end and whether the connection must close.
    func completeResponse(trailers: HTTPHeaders?, close: Bool, requestEnded: Bool) {
        guard let context else { return }
        // The state must be final before the write: writing `.end` lets the pipelining handler
        // deliver the next queued request right away, re-entering `channelRead`.
        let closing = close || inputClosed
        if closing {
            state = .done
        } else if requestEnded {
            state = .idle
            becameIdle()
        } else {
            state = .draining
            lastClientActivity = context.eventLoop.now
        }
        // Whatever held reads for this exchange (a busy origin that then failed, say) is over.
        // Cleared before the write: the write may start the next pipelined exchange, whose own
        // pauses must stand.
        if !closing {
            pauseReasons.subtract([.connecting, .upstreamBusy])
        }
        // A promise only when the close waits for the write: on a kept connection (nearly every
        // response) the write makes no future, whose allocation and generic metadata lookups were
        // 1-2 % of the event loops' time.
        if closing {
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: written)
            tunnel?.tls?.closeRequested = true
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
        if pauseReasons.isEmpty && readPending, self.context != nil {
            readPending = false
            context.read()
        }
    }

    /// Closes the client connection at once; used when a response cannot be completed.
    func abortConnection(reason: String = "the client connection was closed before the exchange completed") {
        let previous = state
        state = .done
        // Whatever was running must learn that the client is gone (both are no-ops when they
        // already finished): otherwise it would outlive this handler and still call it.
        switch previous {
        case .exchange(let exchange): exchange.clientClosed(reason: reason)
        case .tunnelling(let tunnel): tunnel.clientClosed()
        case .idle, .draining, .done, .authenticating: break
        }
        tunnel?.tls?.closeRequested = true
        context?.close(promise: nil)
    }

    /// The connection is leaving HTTP (for a relay or a tunnel's sniffer): nothing more is
    /// dispatched here.
    func stopDispatching() {
        state = .done
    }
}
