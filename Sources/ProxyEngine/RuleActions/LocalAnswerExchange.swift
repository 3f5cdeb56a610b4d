import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// Answers one request from the proxy itself because a rule says so, without contacting the
/// origin: `block` (a short text) or `map_local` (a local file, streamed in chunks read on the
/// thread pool, with back-pressure from the client's writes).
///
/// The request is read to its end and recorded like any other (an `Expect: 100-continue` is
/// answered so the client sends its body); the answer goes out once the request has ended.
/// Everything runs on the client's event loop; nothing touches `client` after `clientClosed`.
/// When the client goes (or stalls), pool work still queued for it (the open, the next chunk)
/// is cancelled and never runs.
final class LocalAnswerExchange {
    enum Answer {
        case block(AppliedRule<BlockAction>)
        /// The file a map-local rule chose, or why the request's path names none.
        case file(AppliedRule<MapLocalAction>, LocalFileLookup.Result)
    }

    private unowned let client: ClientHTTPHandler
    private let services: ProxyServices
    private let answer: Answer
    private var recorder: ExchangeRecorder
    private let version: HTTPVersion
    private let keepAlive: Bool
    private let isHeadRequest: Bool
    private var requestEnded = false
    private var responding = false
    private var finished = false
    private var file: FileState = .none
    /// Raised when the answer is abandoned: the pool skips the file work still queued.
    private let cancellation = WorkCancellation()
    /// When the client last took a chunk of a file being streamed (nil before streaming).
    private(set) var lastWriteProgress: NIODeadline?

    private enum FileState {
        case none
        case opening
        case opened(LocalFileReader)
        case failed(String)
    }

    static let chunkSize = 64 << 10

    init(client: ClientHTTPHandler, services: ProxyServices, request: ClientRequest, answer: Answer,
         recorder: ExchangeRecorder) {
        self.client = client
        self.services = services
        self.answer = answer
        self.recorder = recorder
        self.version = request.head.version
        // NIO's request decoder stops after a request that asks to upgrade (WebSocket, h2c):
        // nothing more can be read on this connection, so a local answer to one closes it.
        self.keepAlive = request.head.isKeepAlive && !request.head.headers.contains(name: "upgrade")
        self.isHeadRequest = request.head.method == .HEAD
        switch answer {
        case .block(let rule): self.recorder.applied(rule: rule.name, note: nil)
        case .file(let rule, _): self.recorder.applied(rule: rule.name, note: nil)
        }
        if request.head.version == .http1_1,
           request.head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            client.write(.head(HTTPResponseHead(version: .http1_1, status: .continue)))
            client.flush()
        }
    }

    var isRequestComplete: Bool { requestEnded }

    func start() {
        guard case .file(_, .file(let path)) = answer else { return }
        file = .opening
        LocalFileReader.opening(path: path, on: services.blockingWork, eventLoop: client.eventLoop,
                                cancellation: cancellation)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let reader):
                    guard !self.finished else {
                        reader.close()
                        return
                    }
                    self.file = .opened(reader)
                case .failure(let error):
                    self.file = .failed("\(error)")
                }
                self.respondIfReady()
            }
    }

    // MARK: from the client

    func clientBody(_ buffer: ByteBuffer) {
        guard !finished else { return }
        recorder.requestBody(buffer)
    }

    func clientEnd() {
        guard !finished else { return }
        requestEnded = true
        respondIfReady()
    }

    func clientClosed(reason: String = "client closed the connection before the exchange completed") {
        guard !finished else { return }
        finished = true
        cancellation.cancel()
        if case .opened(let reader) = file { reader.close() }
        services.sink.record(recorder.finish(error: reason))
    }

    /// The request body stopped arriving for the client idle timeout.
    func requestStalled(seconds: Int64) {
        requestFailed(.requestBodyTimeout(seconds: seconds))
    }

    /// The request cannot be read to its end (its body stalled, or is malformed): answered with
    /// `failure` and the connection closed, unless the answer has begun (then only closed).
    func requestFailed(_ failure: ProxyFailure) {
        guard !finished else { return }
        guard !responding else {
            clientClosed(reason: failure.message)
            client.abortConnection(reason: failure.message)
            return
        }
        finished = true
        cancellation.cancel()
        if case .opened(let reader) = file { reader.close() }
        services.sink.record(recorder.finish(error: failure.message))
        client.answer(failure, version: version, keepAlive: false, requestEnded: false)
    }

    // MARK: answering

    private func respondIfReady() {
        guard requestEnded, !responding, !finished else { return }
        switch answer {
        case .block(let rule):
            responding = true
            respondBlocked(rule)
        case .file(let rule, .refused(let reason)):
            responding = true
            respondMissing(rule, reason: reason)
        case .file(let rule, .file):
            switch file {
            case .none, .opening:
                return
            case .failed(let reason):
                responding = true
                respondMissing(rule, reason: reason)
            case .opened(let reader):
                responding = true
                respondWithFile(reader, rule: rule)
            }
        }
    }

    private func respondBlocked(_ rule: AppliedRule<BlockAction>) {
        let body = rule.action.body ?? "blocked by ProxyApp rule '\(rule.name)'\n"
        var headers = HTTPHeaders(rule.action.headers.map { ($0.name, $0.value) })
        if !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Proxy-Status", value: ProxyFailure.proxyStatusHeader(
            error: "http_request_denied", details: "blocked by rule '\(rule.name)'"))
        recorder.applied(rule: nil, note: "blocked by rule '\(rule.name)'")
        sendWhole(status: rule.action.status, headers: headers, body: Array(body.utf8))
    }

    private func respondMissing(_ rule: AppliedRule<MapLocalAction>, reason: String) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        recorder.applied(rule: nil, note: "map_local: \(reason)")
        sendWhole(status: 404, headers: headers, body: Array("map_local rule '\(rule.name)': \(reason)\n".utf8))
    }

    private func sendWhole(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var headers = headers
        // 204, 205 and 304 answers carry no body (a block rule may use them: a silent "done").
        let bodyless = [204, 205, 304].contains(status)
        if bodyless {
            headers.remove(name: "content-type")
        } else {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        let head = responseHead(status: status, headers: headers)
        client.write(.head(head))
        if !isHeadRequest && !bodyless {
            var buffer = client.channel?.allocator.buffer(capacity: body.count) ?? ByteBuffer()
            buffer.writeBytes(body)
            recorder.responseBody(buffer)
            client.write(.body(.byteBuffer(buffer)))
        }
        finish()
    }

    private func respondWithFile(_ reader: LocalFileReader, rule: AppliedRule<MapLocalAction>) {
        var headers = HTTPHeaders(rule.action.headers.map { ($0.name, $0.value) })
        if !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type",
                        value: rule.action.contentType ?? ContentTypeGuess.contentType(forPath: reader.path))
        }
        headers.replaceOrAdd(name: "Content-Length", value: String(reader.size))
        recorder.applied(rule: nil, note: "map_local: \(reader.path)")
        client.write(.head(responseHead(status: rule.action.status, headers: headers)))
        if isHeadRequest || reader.size == 0 {
            reader.close()
            finish()
            return
        }
        client.flush()  // the head goes out at once; chunks follow as the pool reads them
        lastWriteProgress = client.eventLoop.now
        sendChunk(of: reader, from: 0)
    }

    /// The client took no chunk of the file for the idle timeout: it stopped reading. The
    /// response cannot be finished, so the connection closes.
    func writeStalled(seconds: Int64) {
        guard !finished else { return }
        finished = true
        cancellation.cancel()
        if case .opened(let reader) = file { reader.close() }
        services.sink.record(recorder.finish(error: "the client stopped reading the map_local file for \(seconds)s (response incomplete)"))
        client.abortConnection()
    }

    /// Reads the next chunk on the pool, writes it, and reads on once the client took it.
    ///
    /// A read may complete after the client left and its handler is gone: the closures use the
    /// loop taken here and touch `client` only while `finished` is false.
    private func sendChunk(of reader: LocalFileReader, from offset: Int64) {
        guard !finished, let allocator = client.channel?.allocator else {
            reader.close()
            return
        }
        let loop = client.eventLoop
        let count = Int(min(Int64(Self.chunkSize), reader.size - offset))
        reader.read(offset: offset, count: count, allocator: allocator, on: services.blockingWork, eventLoop: loop)
            .assumeIsolated()
            .flatMap { buffer -> EventLoopFuture<Int64> in
                guard !self.finished else { return loop.makeSucceededFuture(-1) }
                self.recorder.responseBody(buffer)
                let next = offset + Int64(buffer.readableBytes)
                return self.client.writeAndFlush(.body(.byteBuffer(buffer))).map { next }
            }
            .whenComplete { result in
                switch result {
                case .success(let next) where next < 0:
                    reader.close()
                case .success(let next):
                    self.lastWriteProgress = loop.now
                    if next >= reader.size {
                        reader.close()
                        self.finish()
                    } else {
                        self.sendChunk(of: reader, from: next)
                    }
                case .failure(let error):
                    reader.close()
                    guard !self.finished else { return }
                    // The head and part of the body are out: closing is the only honest signal.
                    self.finished = true
                    self.services.sink.record(self.recorder.finish(error: "map_local: \(error) (response incomplete)"))
                    self.client.abortConnection()
                }
            }
    }

    private func responseHead(status: Int, headers: HTTPHeaders) -> HTTPResponseHead {
        var headers = headers
        let close = !keepAlive || client.inputClosed
        headers.replaceOrAdd(name: "Connection", value: close ? "close" : "keep-alive")
        let responseVersion: HTTPVersion = version == .http1_0 ? .http1_0 : .http1_1
        let head = HTTPResponseHead(version: responseVersion, status: HTTPResponseStatus(statusCode: status),
                                    headers: headers)
        recorder.responseHead(head)
        return head
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        services.sink.record(recorder.finish(error: nil))
        client.completeResponse(trailers: nil, close: !keepAlive, requestEnded: true)
    }
}
