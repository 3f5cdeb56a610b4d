import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ProxyCore
import ProxyModel

/// Sends requests through the engine with no client connection: replays of captured flows and
/// requests a person wrote.
///
/// Each request gets a socket pair inside the process: one end carries the proxy's usual client
/// pipeline (`ClientPipelineSetup.configure` with `ReplaySettings`), the other an HTTP/1.1
/// client that writes the request and reads the answer. So a replay is framed, routed by the
/// rules (unless `ignoresRules`), pooled, sent over verified upstream TLS and captured exactly as
/// a client's request is — no second HTTP stack to drift from the first — and costs no TCP port
/// and no login. Its flow says `replay` as the client and links to the original (`Flow.replayOf`).
public final class FlowReplayer: Sendable {
    private let services: ProxyServices
    private let group: any EventLoopGroup
    private let ignoresRules: Bool

    /// The most requests one `run` sends at once.
    public static let maximumConcurrency = 64

    init(services: ProxyServices, group: any EventLoopGroup, ignoresRules: Bool) {
        self.services = services
        self.group = group
        self.ignoresRules = ignoresRules
    }

    /// Sends `requests` in order, `repeating` times over (the whole list, then again), at most
    /// `concurrency` at once; the outcomes come back in sending order. `keepingBody` bounds the
    /// response bytes kept per outcome, and headers are kept only when asked (a long replay
    /// keeps a few bytes per outcome). Stops starting new sends once `isCancelled` says so or the
    /// proxy is stopping; those not sent come back as failures saying so.
    public func run(_ requests: [ReplayRequest], repeating: Int = 1, concurrency: Int, keepingBody: Int = 0,
                    keepingHeaders: Bool = false, isCancelled: @escaping @Sendable () -> Bool = { false }) async -> [ReplayOutcome] {
        let width = max(1, min(concurrency, Self.maximumConcurrency))
        let total = requests.isEmpty ? 0 : requests.count * max(1, repeating)
        var outcomes = [ReplayOutcome?](repeating: nil, count: total)
        await withTaskGroup(of: (Int, ReplayOutcome).self) { tasks in
            var next = 0
            func startNext() {
                guard next < total, !isCancelled(), !services.sink.isStopping else { return }
                let index = next
                let request = requests[index % requests.count]
                next += 1
                tasks.addTask {
                    var outcome = await self.send(request, keepingBody: keepingBody)
                    if !keepingHeaders { outcome.headers = [] }
                    return (index, outcome)
                }
            }
            for _ in 0..<width { startNext() }
            while let (index, outcome) = await tasks.next() {
                outcomes[index] = outcome
                startNext()
            }
        }
        let reason = services.sink.isStopping ? "not sent: the proxy is stopping" : "not sent: the replay was stopped"
        return outcomes.map { $0 ?? ReplayOutcome(failure: reason) }
    }

    /// Sends one request and waits for its whole answer.
    public func send(_ request: ReplayRequest, keepingBody: Int = 0) async -> ReplayOutcome {
        let started = DispatchTime.now().uptimeNanoseconds
        var outcome: ReplayOutcome
        do {
            outcome = try await exchange(request, keepingBody: keepingBody).get()
        } catch let failure as ReplayFailure {
            outcome = ReplayOutcome(failure: failure.reason)
        } catch {
            outcome = ReplayOutcome(failure: "the replay could not be sent: \(SystemErrorText.describe(error))")
        }
        outcome.milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        return outcome
    }

    private func exchange(_ request: ReplayRequest, keepingBody: Int) -> EventLoopFuture<ReplayOutcome> {
        let loop = group.next()
        guard services.replayAdmission.enter() else {
            return loop.makeFailedFuture(ReplayFailure(reason: "not sent: the proxy is stopping"))
        }
        let head: HTTPRequestHead
        do {
            head = try Self.head(for: request)
        } catch {
            services.replayAdmission.leave()
            return loop.makeFailedFuture(error)
        }
        var descriptors: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
            services.replayAdmission.leave()
            return loop.makeFailedFuture(ReplayFailure(
                reason: "the replay could not open a connection inside the proxy: \(SystemErrorText.words(errno: errno))"))
        }
        let services = self.services
        let settings = ReplaySettings(ignoresRules: ignoresRules)
        let proxySide = ClientBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ClientPipelineSetup.configure(channel, services: services, replay: settings)
                }
            }
            .withConnectedSocket(descriptors[0])
        let promise = loop.makePromise(of: ReplayOutcome.self)
        let clientSide = ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // The request was checked by `head(for:)`: NIO's stricter check would refuse URLs
                    // (`|`, `{}`) the proxy itself forwards for clients.
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(enableOutboundHeaderValidation: false)
                    try channel.pipeline.syncOperations.addHandler(ReplayResponseReader(keepingBody: keepingBody,
                                                                                          promise: promise))
                }
            }
            .withConnectedSocket(descriptors[1])
        let body = request.body
        let admission = services.replayAdmission
        proxySide.and(clientSide).whenComplete { result in
            admission.leave()
            switch result {
            case .success(let (_, client)):
                client.write(HTTPClientRequestPart.head(head), promise: nil)
                if !body.isEmpty {
                    client.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
                }
                client.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                promise.futureResult.whenComplete { _ in client.close(promise: nil) }
            case .failure(let error):
                promise.fail(ReplayFailure(
                    reason: "the replay could not open a connection inside the proxy: \(SystemErrorText.describe(error))"))
            }
        }
        // Whichever side was not set up still owns its descriptor.
        let (proxyEnd, clientEnd) = (descriptors[0], descriptors[1])
        proxySide.whenFailure { _ in close(proxyEnd) }
        clientSide.whenFailure { _ in close(clientEnd) }
        return promise.futureResult
    }

    /// The request head as written on the in-process connection: absolute-form, the body framed
    /// by `Content-Length` (the captured framing fields are dropped: framing is decided here).
    static func head(for request: ReplayRequest) throws -> HTTPRequestHead {
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw ReplayFailure(reason: "cannot send \(request.url.prefix(200)): only http:// and https:// URLs can be sent")
        }
        guard request.method.utf8.count <= 64, HTTPGrammar.isToken(request.method) else {
            throw ReplayFailure(reason: "cannot send a request whose method '\(request.method.prefix(40))' is not an HTTP token")
        }
        guard request.url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ReplayFailure(reason: "cannot send \(request.url.prefix(200).debugDescription): a URL may not hold spaces, "
                                + "control characters or non-ASCII bytes (percent-encode them)")
        }
        // Hop-by-hop as the engine judges it (what `Connection` names too, never Host or framing):
        // the proxy dropped those the first time.
        let hopByHop = HopByHopHeaders(connectionValues: request.headers.filter { $0.name.lowercased() == "connection" }.map(\.value),
                                       forwardUpgrade: false)
        var headers = HTTPHeaders()
        for field in request.headers where hopByHop.forwards(field.name) && !Self.droppedFields.contains(field.name.lowercased())
            && !field.name.hasPrefix(":") {
            guard HTTPGrammar.isToken(field.name) else {
                throw ReplayFailure(reason: "cannot send the header name \(field.name.prefix(40).debugDescription): not an HTTP token")
            }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw ReplayFailure(reason: "cannot send header \(field.name.prefix(40)): its value holds a line break or NUL")
            }
            headers.add(name: field.name, value: field.value)
        }
        if let original = request.replayOf {
            headers.add(name: ReplaySettings.originalHeader, value: String(original))
        }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method.uppercased()) {
            headers.add(name: "Content-Length", value: String(request.body.count))
        }
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.url,
                               headers: headers)
    }

    /// Fields the replay never copies besides hop-by-hop ones (`HopByHopHeaders`): framing
    /// (decided again), the replay link (only the replayer writes it), and `Expect` (the body is
    /// sent at once).
    static let droppedFields: Set<String> = ["content-length", "transfer-encoding", "expect", ReplaySettings.originalHeader]
}

/// A replay that could not be sent or answered, in words.
struct ReplayFailure: Error {
    var reason: String
}

/// Reads the in-process connection's answer into a `ReplayOutcome`.
final class ReplayResponseReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let keepingBody: Int
    private let promise: EventLoopPromise<ReplayOutcome>
    private var outcome = ReplayOutcome()
    private var done = false

    init(keepingBody: Int, promise: EventLoopPromise<ReplayOutcome>) {
        self.keepingBody = keepingBody
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard head.status.code >= 200 || head.status.code == 101 else { return }  // interim answers
            outcome.status = Int(head.status.code)
            outcome.reason = head.status.reasonPhrase
            outcome.headers = head.headers.map { HeaderField(name: $0.name, value: $0.value) }
            outcome.body = []
            outcome.bodySize = 0
        case .body(let buffer):
            outcome.bodySize += buffer.readableBytes
            let room = keepingBody - outcome.body.count
            if room > 0 {
                outcome.body += buffer.readableBytesView.prefix(room)
            }
        case .end:
            finish()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(ReplayFailure(reason: outcome.status == nil
                ? "the proxy closed the replay's connection before answering"
                : "the proxy closed the replay's connection before the response ended"))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(ReplayFailure(reason: "the replay's answer could not be read: \(error is HTTPParserError ? "it is not valid HTTP" : SystemErrorText.describe(error))"))
        }
        context.close(promise: nil)
    }

    private func finish() {
        guard !done else { return }
        done = true
        promise.succeed(outcome)
    }
}
