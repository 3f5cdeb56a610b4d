import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// The client side of an exchange as its driver sees it: where responses are written and
/// client reads are held. `ClientHTTPHandler` (an HTTP/1 connection) is one; an HTTP/2 stream
/// will be another.
protocol ExchangeClientSide: AnyObject {
    var eventLoop: any EventLoop { get }
    var isWritable: Bool { get }
    var allocator: ByteBufferAllocator { get }
    /// Upstream connections an origin bound to this client's login (NTLM, Negotiate).
    var privateUpstreams: PrivateUpstreamConnections { get }
    /// The policy keeping this client from the proxy's own machine (a client from elsewhere
    /// without `--allow-internal`); nil: unguarded.
    var destinationGuard: ClientAccessPolicy? { get }
    /// A replay sent with `--no-rules`: forwarded as it is, no rule consulted.
    var ignoresRules: Bool { get }
    /// Paces what the client sends (a throttle's upload rate); nil stops pacing. `isStream`: the
    /// client side is an HTTP/2 stream, paced on its connection.
    func paceUploads(bytesPerSecond: Int?, isStream: Bool)
    func write(_ part: HTTPServerResponsePart)
    /// Writes and flushes; the future completes once written (back-pressure for local answers).
    func writeAndFlush(_ part: HTTPServerResponsePart) -> EventLoopFuture<Void>
    func flush()
    func setReadsPaused(_ paused: Bool, by reason: ClientReadPause)
    /// Ends the response; whatever reads the exchange paused are over.
    func completeResponse(trailers: HTTPHeaders?, close: Bool, requestEnded: Bool)
    /// Answers with the proxy's own failure response, then as `completeResponse`.
    func answer(_ failure: ProxyFailure, version: HTTPVersion, keepAlive: Bool, requestEnded: Bool)
    func abortConnection(reason: String)
    /// After a `101`: the client connection and `upstream` become one byte relay.
    /// `meter` counts (and may capture) what the relay carries; nil for none.
    func switchToRawBytes(upstream: any Channel, meter: TunnelMeter?)
    /// A large upload is over: receive buffers it grew can go (`ChannelTuning.releaseReadBuffers`).
    func releaseReadBuffers()
}

/// Carries out one exchange's `ExchangeStateMachine` with NIO: the machine decides, this does.
///
/// It owns what the machine leaves out on purpose: the bytes (the request as forwarded, parts
/// buffered while connecting, bodies held for a rewrite), the upstream connection and the
/// handler that reads it, the flow's recorder, the rewrite rule's edits, and a local answer's
/// file. Every event — from the client side, the upstream handler, a connect, a rewrite or a
/// file read finishing — goes into the machine, and the actions it returns are performed in
/// order (`perform`). Nothing here decides what happens next.
///
/// Created by `ClientHTTPHandler` for each proxied request; everything runs on the client's
/// event loop. The machine guarantees that nothing touches the client side after the exchange
/// finished, so a late connect or file read never reaches a handler that is gone.
final class ExchangeDriver: UpstreamHTTPHandlerDelegate {
    unowned let client: any ExchangeClientSide
    let services: ProxyServices
    let pool: UpstreamConnectionPool
    var machine: ExchangeStateMachine
    var recorder: ExchangeRecorder
    let clientVersion: HTTPVersion
    let isHeadRequest: Bool

    // Set by routing (`ExchangeDriver+Routing`).
    var destination: RequestedDestination?
    var key = UpstreamConnectionPool.Key(host: "", port: 0, tls: false, serverName: nil, addressOverride: nil)
    var upstreamHead: HTTPRequestHead
    /// How to reach the origin over TLS (nil: plain HTTP).
    var upstreamTLS: UpstreamTLSSettings?
    /// A dns rule's addresses for the upstream connection.
    var addresses: [String]?
    /// What only rewrites, holds and local answers need, in one object made on first use: a
    /// plain forwarded exchange never allocates it, and its teardown stays short (the driver's
    /// deinit was a visible part of a proxied request's CPU with these fields inline).
    var rare: RareExchangeState?
    var rareState: RareExchangeState {
        if let rare { return rare }
        let made = RareExchangeState()
        rare = made
        return made
    }
    var rewriter: ExchangeRewriter? {
        get { rare?.rewriter }
        set { rareState.rewriter = newValue }
    }
    /// Stops off-loop work (a rewrite, a file read) once the exchange is over.
    var workCancellation: WorkCancellation? {
        get { rare?.workCancellation }
        set { rareState.workCancellation = newValue }
    }
    /// A rule changed the request's URL or headers: the flow keeps the request as forwarded.
    var requestChanged: Bool {
        get { rare?.requestChanged ?? false }
        set { if newValue || rare != nil { rareState.requestChanged = newValue } }
    }
    var localAnswer: LocalAnswer? {
        get { rare?.localAnswer }
        set { rareState.localAnswer = newValue }
    }
    var localFile: LocalFileState {
        get { rare?.localFile ?? .none }
        set { rareState.localFile = newValue }
    }
    /// When the client last took a chunk of a local answer being streamed.
    var lastWriteProgress: NIODeadline? {
        get { rare?.lastWriteProgress }
        set { rareState.lastWriteProgress = newValue }
    }

    var upstream: (channel: any Channel, handler: UpstreamHTTPHandler)?
    /// Request parts read while the connection was being opened.
    var pendingParts: [ByteBuffer] = []
    /// The request's forwardable trailers, kept until its end goes upstream.
    var requestTrailers: HTTPHeaders?
    /// The origin head being handled (final or interim) and its status with the origin's phrase.
    var originResponseHead: HTTPResponseHead?
    var originStatus: HTTPResponseStatus = .ok
    /// The client's response head, shaped from the machine's plan, until it is written.
    var preparedHead: HTTPResponseHead?
    var responseTrailers: HTTPHeaders?

    /// - Parameter request: the request head as the client sent it (the flow records it so).
    init(client: any ExchangeClientSide, services: ProxyServices, pool: UpstreamConnectionPool,
         head: HTTPRequestHead, recorder: ExchangeRecorder) {
        self.client = client
        self.services = services
        self.pool = pool
        self.recorder = recorder
        self.clientVersion = head.version
        self.isHeadRequest = head.method == .HEAD
        self.upstreamHead = head
        self.machine = ExchangeStateMachine(request: .init(
            method: head.method.rawValue, majorVersion: head.version.major, minorVersion: head.version.minor,
            keepAlive: head.isKeepAlive,
            // `contains` first: it allocates nothing, and almost no request has an Expect.
            expectsContinue: head.headers.contains(name: "expect")
                && head.headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" },
            asksUpgrade: head.headers.contains(name: "upgrade")))
    }

    // MARK: from the client

    func clientBody(_ buffer: ByteBuffer) {
        perform(machine.clientBody(), body: buffer)
    }

    func clientEnd(_ trailers: HTTPHeaders?) {
        if let trailers { requestTrailers = TrailerFields.forwardable(trailers) }
        perform(machine.clientEnd())
    }

    func clientReadComplete() {
        perform(machine.clientReadComplete())
    }

    func clientWritabilityChanged(isWritable: Bool) {
        perform(machine.clientWritabilityChanged(isWritable: isWritable))
    }

    func clientInputClosed() {
        perform(machine.clientInputClosed())
        if rare?.holdID != nil {
            // Held at a breakpoint, a client that ends its side is taken as gone (a timed-out
            // curl closes so): nothing is sent for it, and its connection closes.
            client.abortConnection(reason: "the client closed its connection while the exchange was held at a breakpoint")
        }
    }

    func clientClosed(reason: String = "client closed the connection before the exchange completed") {
        perform(machine.clientClosed(reason: reason))
    }

    func requestFailed(_ failure: ProxyFailure) {
        perform(machine.requestFailed(failure))
    }

    func requestStalled(seconds: Int64) {
        perform(machine.requestStalled(seconds: seconds))
    }

    func writeStalled(seconds: Int64) {
        perform(machine.writeStalled(seconds: seconds))
    }

    var awaitsClientBody: Bool { machine.awaitsClientBody }
    var isWritingLocalAnswer: Bool { machine.isWritingLocalAnswer }

    // MARK: carrying out actions

    /// Performs `actions` in order; `body` is the part of the event that returned them.
    func perform(_ actions: [ExchangeAction], body: ByteBuffer? = nil) {
        for action in actions {
            switch action {
            case .route:
                route()
            case .writeContinue:
                client.write(.head(HTTPResponseHead(version: .http1_1, status: .continue)))
                client.flush()
            case .prepareLocalAnswer:
                prepareLocalAnswer()
            case .startLocalAnswer(let close):
                startLocalAnswer(close: close)
            case .discardLocalAnswer:
                discardLocalAnswer()
            case .captureRequestBody:
                recorder.requestBody(body!)
            case .openUpstream(let allowReuse):
                openUpstreamAfterLatency(allowReuse: allowReuse)
            case .sendRequestHead:
                upstream?.handler.send(.head(headAsSent))
            case .sendRequestBody:
                recorder.requestBody(body!)
                sendUpstream(body!)
            case .bufferRequestBody:
                recorder.requestBody(body!)
                pendingParts.append(body!)
            case .sendBufferedRequestBody:
                for part in pendingParts { sendUpstream(part) }
                pendingParts.removeAll()
            case .sendRequestEnd:
                upstream?.handler.send(.end(requestTrailers))
                recorder.requestFullySent()
            case .flushUpstream:
                upstream?.handler.flush()
            case .pauseUpstreamReads:
                upstream?.handler.pauseReads()
            case .resumeUpstreamReads:
                upstream?.handler.resumeReads()
            case .checkInUpstream(let boundToClient):
                checkInUpstream(boundToClient: boundToClient)
            case .closeUpstream:
                closeUpstream()
            case .switchToByteRelay:
                switchToByteRelay()
            case .holdRequestBody:
                recorder.requestBody(body!)
                holdRequestBody(body!)
            case .requestHeld:
                rewriteHeldRequest()
            case .bufferReleasedRequestBody:
                if let rare {
                    pendingParts = rare.releasedRequestBody + pendingParts
                    rare.releasedRequestBody = []
                }
            case .prepareResponseHead(let plan):
                prepareResponseHead(plan)
            case .decideResponseHold:
                decideResponseHold()
            case .writeResponseHead:
                writePreparedHead()
            case .holdResponseBody:
                holdResponseBody(body!)
            case .responseHeld:
                rewriteHeldResponse()
            case .writeHeldResponseBody:
                writeHeldResponseBody()
            case .writeReleasedResponse:
                writeReleasedResponse()
            case .writeInterimHead:
                writeInterimHead()
            case .writeResponseBody:
                relayResponseBody(body!)
            case .flushClient:
                client.flush()
            case .pauseClientReads(let reason):
                client.setReadsPaused(true, by: reason)
            case .resumeClientReads(let reason):
                client.setReadsPaused(false, by: reason)
            case .completeResponse(let close, let requestEnded):
                client.completeResponse(trailers: responseTrailers, close: close, requestEnded: requestEnded)
            case .answer(let failure, let keepAlive, let requestEnded):
                client.answer(failure, version: clientVersion, keepAlive: keepAlive, requestEnded: requestEnded)
            case .abortClient(let reason):
                client.abortConnection(reason: reason)
            case .cancelWork:
                rare?.workCancellation?.cancel()
                rare?.heldResponse = nil
            case .record(let error):
                if rare?.holdID != nil, let since = rare?.holdSince {  // ended while held: the hold still counts
                    recorder.held(from: since, to: client.eventLoop.now)
                }
                let flow = recorder.finish(error: error)
                if flow.requestBody.size >= ChannelTuning.largeTransfer {
                    client.releaseReadBuffers()
                }
                if error == nil, machine.responsePlan?.switchingProtocols == true,
                   upstreamHead.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) {
                    // Messages follow the flow (`switchToByteRelay`); nil: the sink keeps none.
                    rareState.webSocketKey = services.sink.recordOpen(flow)
                } else {
                    services.sink.record(consume flow)  // moved: the writer owns it from here
                }
                if let holdID = rare?.holdID {  // ended while held (the client left): no longer listed
                    rare?.holdID = nil
                    services.breakpoints.remove(holdID)
                }
            }
        }
    }

    /// Sends a request-body part; an origin that stops taking it holds the client's reads.
    private func sendUpstream(_ buffer: ByteBuffer) {
        guard let upstream else { return }
        upstream.handler.send(.body(.byteBuffer(buffer)))
        if !upstream.channel.isWritable {
            perform(machine.upstreamWritabilityChanged(isWritable: false))
        }
    }

    /// Writes a response-body part; a client that stops taking it holds the origin's reads.
    func relayResponseBody(_ buffer: ByteBuffer) {
        recorder.responseBody(buffer)
        client.write(.body(.byteBuffer(buffer)))
        if !client.isWritable {
            perform(machine.clientWritabilityChanged(isWritable: false))
        }
    }
}

/// The part of an exchange's state only rewrites, holds and local answers use (`ExchangeDriver.rare`).
final class RareExchangeState {
    var rewriter: ExchangeRewriter?
    var workCancellation: WorkCancellation?
    var requestChanged = false
    var localAnswer: ExchangeDriver.LocalAnswer?
    var localFile: ExchangeDriver.LocalFileState = .none
    var lastWriteProgress: NIODeadline?
    /// The request body held for a rewrite (then the body as released).
    var heldRequest: HeldBody?
    var releasedRequestBody: [ByteBuffer] = []
    var heldResponse: HeldBody?
    /// The origin's head, kept while a rewrite may change the response.
    var originHead: HTTPResponseHead?
    /// A rewrite changed the response's status or headers.
    var responseHeadEdited = false
    var releasedResponse: (head: HTTPResponseHead, body: ByteBuffer)?
    /// The flow of a WebSocket upgrade, recorded open: its messages follow under this key.
    var webSocketKey: OpenFlowKey?
    /// The request / the response stops at a breakpoint once whole (`ExchangeDriver+Breakpoints`).
    var breakpointOnRequest = false
    var breakpointOnResponse = false
    /// The filter decided at the request that the response stops (`Breakpoints.verdict`).
    var breakpointResponseForecast = false
    /// While held at a breakpoint: the hold's id in `Breakpoints`, and since when.
    var holdID: Int?
    var holdSince: NIODeadline?
}
