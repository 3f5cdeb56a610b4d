import NIOCore
import NIOHTTP1
import Rules

/// The bodies a rewrite rule holds back (`ExchangeRewriter`): the request body until it ends,
/// then sent rewritten; the response body until it ends, then written rewritten. A body past
/// the rewriter's limit is released unchanged and streamed on, with a note on the flow.
///
/// The properties this touches are internal only for this file; nothing else sets them.
extension ForwardExchange {
    func holdRequestBody(_ buffer: ByteBuffer) {
        if heldRequest!.append(buffer) { return }
        recorder.applied(rule: nil, note: "rewrite: request body over \(rewriter!.limit >> 20) MiB, not rewritten")
        releaseRequest(parts: heldRequest!.parts, headers: nil)
    }

    /// The request ended: rewrite what was held (off the loop when large), then send it.
    func rewriteHeldRequest(_ held: HeldBody) {
        guard let rewriter else { return }
        ExchangeRewriter.rewrite(held, headers: upstreamHead.headers, replacements: rewriter.action.requestBody,
                                 side: "request", limit: rewriter.limit, cancellation: workCancellation,
                                 work: services.blockingWork,
                                 on: client.eventLoop)
            .assumeIsolated()
            .whenComplete { outcome in
                guard !self.finished else { return }
                let result = ExchangeRewriter.result(of: outcome, held: held, side: "request")
                if let note = result.note { self.recorder.applied(rule: nil, note: note) }
                var headers = self.upstreamHead.headers
                ExchangeRewriter.fit(&headers, to: result)
                var buffer = ByteBuffer()
                buffer.writeBytes(result.body)
                self.requestTrailers = nil
                self.upstreamHead.headers = headers
                self.recordForwardedRequest(after: result)
                self.releaseRequest(parts: result.body.isEmpty ? [] : [buffer], headers: headers)
            }
    }

    /// Stops holding the request: `parts` (and `headers`, when the rewrite changed the body's
    /// framing) go out now, or when the connection is up.
    func releaseRequest(parts: [ByteBuffer], headers: HTTPHeaders?) {
        heldRequest = nil
        if let headers { upstreamHead.headers = headers }
        pendingParts = parts.map { .body(.byteBuffer($0)) } + pendingParts
        if startDeferred {
            startDeferred = false
            start()
        } else if let upstream {
            sendRequestSoFar(on: upstream.handler)
        }
    }

    func holdResponseBody(_ buffer: ByteBuffer) {
        if heldResponse!.body.append(buffer) { return }
        // Too large to rewrite: send what was held and stream the rest.
        let (head, held) = heldResponse!
        heldResponse = nil
        recorder.applied(rule: nil, note: "rewrite: response body over \(rewriter!.limit >> 20) MiB, not rewritten")
        recorder.responseHead(head)
        client.write(.head(head))
        responseHeadWritten = true
        for part in held.parts { relayResponseBody(part) }
    }

    func sendRewrittenResponse(head: HTTPResponseHead, result: ExchangeRewriter.RewrittenBody, original: HeldBody) {
        heldResponse = nil
        if let note = result.note { recorder.applied(rule: nil, note: note) }
        recordOriginResponse(after: result, original: original)
        var head = head
        ExchangeRewriter.fit(&head.headers, to: result)
        recorder.responseHead(head)
        var buffer = ByteBuffer()
        buffer.writeBytes(result.body)
        recorder.responseBody(buffer)
        if clientGoneWhileRewriting {
            services.sink.record(recorder.finish(error: "client closed the connection before the exchange completed"))
            return
        }
        services.sink.record(recorder.finish(error: nil))
        client.write(.head(head))
        if !result.body.isEmpty {
            client.write(.body(.byteBuffer(buffer)))
        }
        client.completeResponse(trailers: nil, close: closeClientAfterResponse || !requestEnded, requestEnded: requestEnded)
    }
}
