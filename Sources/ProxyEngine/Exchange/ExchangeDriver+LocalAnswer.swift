import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// Answers the proxy writes itself because a rule says so, without contacting the origin:
/// `block` (a short text) or `map_local` (a local file, streamed in chunks read on the thread
/// pool, with back-pressure from the client's writes).
///
/// The machine decides when (once the request has ended and the file is open) and what
/// happens on failure; this writes. When the exchange ends early, file work still queued for
/// it (the open, the next chunk) is cancelled and never runs.
extension ExchangeDriver {
    enum LocalAnswer {
        case block(AppliedRule<BlockAction>)
        /// The file a map-local rule chose, or why the request's path names none.
        case file(AppliedRule<MapLocalAction>, LocalFileLookup.Result)
    }

    enum LocalFileState {
        case none
        case opened(LocalFileReader)
        case failed(String)
    }

    static let localChunkSize = 64 << 10

    func prepareLocalAnswer() {
        guard case .file(_, .file(let path)) = localAnswer else {
            perform(machine.localAnswerPrepared())
            return
        }
        LocalFileReader.opening(path: path, on: services.blockingWork, eventLoop: client.eventLoop,
                                cancellation: workCancellation ?? WorkCancellation())
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let reader): self.localFile = .opened(reader)
                case .failure(let error): self.localFile = .failed("\(error)")
                }
                self.perform(self.machine.localAnswerPrepared())
            }
    }

    func discardLocalAnswer() {
        if case .opened(let reader) = localFile { reader.close() }
        localFile = .none
    }

    func startLocalAnswer(close: Bool) {
        switch localAnswer {
        case .block(let rule):
            respondBlocked(rule, close: close)
        case .file(let rule, .refused(let reason)):
            respondMissing(rule, reason: reason, close: close)
        case .file(let rule, .file):
            switch localFile {
            case .failed(let reason):
                respondMissing(rule, reason: reason, close: close)
            case .opened(let reader):
                respondWithFile(reader, rule: rule, close: close)
            case .none:
                respondMissing(rule, reason: "the file was not opened", close: close)
            }
        case nil:
            break
        }
    }

    private func respondBlocked(_ rule: AppliedRule<BlockAction>, close: Bool) {
        let body = rule.action.body ?? "blocked by ProxyApp rule '\(rule.name)'\n"
        var headers = HTTPHeaders(rule.action.headers.map { ($0.name, $0.value) })
        if !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Proxy-Status", value: ProxyFailure.proxyStatusHeader(
            error: "http_request_denied", details: "blocked by rule '\(rule.name)'"))
        recorder.applied(rule: nil, note: "blocked by rule '\(rule.name)'")
        sendWhole(status: rule.action.status, headers: headers, body: Array(body.utf8), close: close)
    }

    private func respondMissing(_ rule: AppliedRule<MapLocalAction>, reason: String, close: Bool) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        recorder.applied(rule: nil, note: "map_local: \(reason)")
        sendWhole(status: 404, headers: headers, body: Array("map_local rule '\(rule.name)': \(reason)\n".utf8),
                  close: close)
    }

    private func sendWhole(status: Int, headers: HTTPHeaders, body: [UInt8], close: Bool) {
        var headers = headers
        // 204, 205 and 304 answers carry no body (a block rule may use them: a silent "done").
        let bodyless = [204, 205, 304].contains(status)
        if bodyless {
            headers.remove(name: "content-type")
        } else {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        client.write(.head(localHead(status: status, headers: headers, close: close)))
        if !isHeadRequest && !bodyless {
            var buffer = client.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            recorder.responseBody(buffer)
            client.write(.body(.byteBuffer(buffer)))
        }
        perform(machine.localAnswerFinished())
    }

    private func respondWithFile(_ reader: LocalFileReader, rule: AppliedRule<MapLocalAction>, close: Bool) {
        var headers = HTTPHeaders(rule.action.headers.map { ($0.name, $0.value) })
        if !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type",
                        value: rule.action.contentType ?? ContentTypeGuess.contentType(forPath: reader.path))
        }
        headers.replaceOrAdd(name: "Content-Length", value: String(reader.size))
        recorder.applied(rule: nil, note: "map_local: \(reader.path)")
        client.write(.head(localHead(status: rule.action.status, headers: headers, close: close)))
        if isHeadRequest || reader.size == 0 {
            discardLocalAnswer()
            perform(machine.localAnswerFinished())
            return
        }
        client.flush()  // the head goes out at once; chunks follow as the pool reads them
        lastWriteProgress = client.eventLoop.now
        sendChunk(of: reader, from: 0)
    }

    /// Reads the next chunk on the pool, writes it, and reads on once the client took it.
    ///
    /// A read may complete after the exchange ended: the closures use the loop taken here and
    /// touch the client only while the machine still writes the answer.
    private func sendChunk(of reader: LocalFileReader, from offset: Int64) {
        guard machine.isWritingLocalAnswer else { return }
        let loop = client.eventLoop
        let count = Int(min(Int64(Self.localChunkSize), reader.size - offset))
        reader.read(offset: offset, count: count, allocator: client.allocator, on: services.blockingWork, eventLoop: loop)
            .assumeIsolated()
            .flatMap { buffer -> EventLoopFuture<Int64> in
                guard self.machine.isWritingLocalAnswer else { return loop.makeSucceededFuture(-1) }
                self.recorder.responseBody(buffer)
                let next = offset + Int64(buffer.readableBytes)
                return self.client.writeAndFlush(.body(.byteBuffer(buffer))).map { next }
            }
            .whenComplete { result in
                switch result {
                case .success(let next) where next < 0:
                    self.discardLocalAnswer()
                case .success(let next):
                    self.lastWriteProgress = loop.now
                    if next >= reader.size {
                        self.discardLocalAnswer()
                        self.perform(self.machine.localAnswerFinished())
                    } else {
                        self.sendChunk(of: reader, from: next)
                    }
                case .failure(let error):
                    self.discardLocalAnswer()
                    self.perform(self.machine.localAnswerFailed(reason: "map_local: \(error)"))
                }
            }
    }

    private func localHead(status: Int, headers: HTTPHeaders, close: Bool) -> HTTPResponseHead {
        var headers = headers
        headers.replaceOrAdd(name: "Connection", value: close ? "close" : "keep-alive")
        let responseVersion: HTTPVersion = clientVersion == .http1_0 ? .http1_0 : .http1_1
        let head = HTTPResponseHead(version: responseVersion, status: HTTPResponseStatus(statusCode: status),
                                    headers: headers)
        recorder.responseHead(head)
        return head
    }
}
