import NIOCore
import NIOHTTP2

/// One `--h2` client: one connection (TCP, CONNECT through the proxy, TLS with ALPN h2 — the
/// same set-up as HTTP/1 through `LoadConnectionHandler`) with `plan.http2Streams` requests in
/// flight, each its own stream; a new stream starts as soon as one ended. No stream starts once
/// the schedule ended; the connection closes when the last one in flight ended.
///
/// A failing stream (reset, closed early, not opened) fails its whole connection, like a failed
/// HTTP/1 request: one error, the streams in flight are dropped, and a new connection follows.
/// Replacing only the stream could spin on a connection that refuses every new one (GOAWAY).
///
/// Lives on one event loop and is touched only there.
final class LoadHTTP2Worker: LoadClientBase, LoadClient, LoadConnectionOwner {
    private var streamCount: Int { plan.http2Streams ?? 1 }
    private var connection: LoadConnectionHandler?
    private var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
    /// The streams whose response has not ended yet.
    private var streams: [ObjectIdentifier: LoadHTTP2StreamHandler] = [:]
    /// When the connection was dialled: the start of its first streams' latency, as for the
    /// first request of an HTTP/1 connection.
    private var connectStartedAt = NIODeadline.distantPast
    private(set) var finished = false

    func start() {
        openConnection()
    }

    /// Set-up is timed from the dial; once HTTP/2 runs, each stream from its own start.
    func checkTimeout(now: NIODeadline) {
        guard let connection else { return }
        if multiplexer == nil {
            if now > connectStartedAt + plan.timeout { connection.timeOut() }
        } else if streams.values.contains(where: { now > $0.startedAt + plan.timeout }) {
            connection.timeOut()
        }
    }

    func stop() {
        finished = true
        streams = [:]
        multiplexer = nil
        connection?.close()
        connection = nil
    }

    // MARK: - called by the connection

    func connectionReady(_ handler: LoadConnectionHandler) {
        guard handler === connection else { return handler.close() }
        guard handler.negotiatedProtocol == "h2" else {
            return handler.fail(.notHTTP2(negotiated: handler.negotiatedProtocol))
        }
        do {
            multiplexer = try handler.startHTTP2()
        } catch {
            return handler.fail(.http2Setup(error))
        }
        for _ in 0..<streamCount { openStream(startedAt: connectStartedAt) }
    }

    /// Never called: this worker sends no HTTP/1 request.
    func responseEnded(_ handler: LoadConnectionHandler, status: Int, connectionClose: Bool) {
        handler.close()
    }

    func connectionFailed(_ handler: LoadConnectionHandler, error: LoadError) {
        guard handler === connection, !finished else { return }
        connection = nil
        multiplexer = nil
        streams = [:]
        tally.recordError(error.description)
        if owner.shouldGiveUp() {
            return owner.giveUp()
        }
        guard NIODeadline.now() < schedule.end else { return finish() }
        // Do not spin on a refusing server.
        loop.assumeIsolated().scheduleTask(in: .milliseconds(10)) { self.openConnection() }
    }

    // MARK: - called by the streams

    func streamEnded(_ stream: LoadHTTP2StreamHandler, status: Int) {
        guard streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
        let now = NIODeadline.now()
        tally.recordResponse(status: status, nanoseconds: UInt64(max(0, (now - stream.startedAt).nanoseconds)),
                             measured: schedule.isMeasured(now))
        if now < schedule.end {
            openStream(startedAt: now)
        } else if streams.isEmpty {
            connection?.close()
            connection = nil
            multiplexer = nil
            finish()
        }
    }

    func streamFailed(_ stream: LoadHTTP2StreamHandler, error: LoadError) {
        guard streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
        connection?.fail(error)
    }

    // MARK: - private

    private func openConnection() {
        guard !finished else { return }
        let now = NIODeadline.now()
        guard now < schedule.end else { return finish() }
        tally.recordConnectionOpened()
        connectStartedAt = now
        let handler = LoadConnectionHandler(worker: self, plan: plan)
        connection = handler
        handler.connect(on: loop)
    }

    private func openStream(startedAt: NIODeadline) {
        guard let multiplexer else { return }
        let stream = LoadHTTP2StreamHandler(worker: self, request: plan.http2Request, startedAt: startedAt)
        streams[ObjectIdentifier(stream)] = stream
        let boundStream = NIOLoopBound(stream, eventLoop: loop)
        multiplexer.createStreamChannel { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandlers(
                    HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https), boundStream.value)
            }
        }
        .assumeIsolated()
        .whenFailure { error in self.streamFailed(stream, error: .stream(error)) }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        owner.workerFinished()
    }
}
