import NIOCore
import NIOHTTP1
import Rules

/// The bodies a rewrite rule holds back (`ExchangeRewriter`): the request body until it ends,
/// then sent rewritten; the response body until it ends, then written rewritten. A body past
/// the rewriter's limit is released unchanged and streamed on, with a note on the flow.
///
/// The machine's hold state is what a breakpoint uses too (`ExchangeDriver+Breakpoints`): the
/// request parked after its end, the response after its end, until released or killed.
extension ExchangeDriver {
    func holdRequestBody(_ buffer: ByteBuffer) {
        guard let rare, rare.heldRequest != nil else { return }
        if rare.heldRequest!.append(buffer) { return }
        let limit = rare.heldRequest!.limit >> 20
        if rewriter != nil { recorder.applied(rule: nil, note: "rewrite: request body over \(limit) MiB, not rewritten") }
        if rare.breakpointOnRequest { recorder.applied(rule: nil, note: "breakpoint: request body over \(limit) MiB, not held") }
        rare.breakpointOnRequest = false
        rare.releasedRequestBody = rare.heldRequest!.parts
        rare.heldRequest = nil
        perform(machine.requestHoldOverflowed())
    }

    /// The request ended while held: rewrite it (off the loop when large), then release it.
    func rewriteHeldRequest() {
        guard let rewriter, let held = rare?.heldRequest else {
            if let rare, let held = rare.heldRequest {  // held for a breakpoint alone: it goes out as it came
                rare.releasedRequestBody = held.parts
                rare.heldRequest = nil
            }
            releaseHeldRequest()
            return
        }
        rewrite(held, headers: upstreamHead.headers, replacements: rewriter.action.requestBody, side: "request") { result in
            var headers = self.upstreamHead.headers
            ExchangeRewriter.fit(&headers, to: result)
            var buffer = ByteBuffer()
            buffer.writeBytes(result.body)
            self.requestTrailers = nil
            self.upstreamHead.headers = headers
            self.recordForwardedRequest(after: result)
            self.rare?.heldRequest = nil
            self.rareState.releasedRequestBody = result.body.isEmpty ? [] : [buffer]
            self.releaseHeldRequest()
        }
    }

    func holdResponseBody(_ buffer: ByteBuffer) {
        guard let rare, rare.heldResponse != nil else { return }
        if rare.heldResponse!.append(buffer) { return }
        // Too large to rewrite or hold: what was held goes out as it is, and the rest streams.
        let limit = rare.heldResponse!.limit >> 20
        if rewriter != nil { recorder.applied(rule: nil, note: "rewrite: response body over \(limit) MiB, not rewritten") }
        if rare.breakpointOnResponse { recorder.applied(rule: nil, note: "breakpoint: response body over \(limit) MiB, not held") }
        rare.breakpointOnResponse = false
        perform(machine.responseHoldOverflowed())
    }

    func writeHeldResponseBody() {
        guard let held = rare?.heldResponse else { return }
        rare?.heldResponse = nil
        for part in held.parts { relayResponseBody(part) }
    }

    /// The response ended while held: rewrite it (off the loop when large), then release it.
    func rewriteHeldResponse() {
        guard let rewriter, let head = preparedHead, let held = rare?.heldResponse else {
            if let rare, let head = preparedHead, let held = rare.heldResponse {  // held for a breakpoint alone
                var body = ByteBuffer()
                for part in held.parts { body.writeImmutableBuffer(part) }
                rare.releasedResponse = (head, body)
                rare.heldResponse = nil
            }
            releaseHeldResponse()
            return
        }
        rewrite(held, headers: head.headers, replacements: rewriter.action.responseBody, side: "response") { result in
            self.recordOriginResponse(after: result, original: held)
            var head = head
            ExchangeRewriter.fit(&head.headers, to: result)
            var buffer = ByteBuffer()
            buffer.writeBytes(result.body)
            self.rare?.heldResponse = nil
            self.rareState.releasedResponse = (head, buffer)
            self.responseTrailers = nil
            self.releaseHeldResponse()
        }
    }

    /// Runs the rewrite of a held body (off the loop when large) and hands its result, with its
    /// note recorded, to `release` — unless the exchange ended meanwhile.
    private func rewrite(_ held: HeldBody, headers: HTTPHeaders, replacements: [TextReplacement], side: String,
                         release: @escaping (ExchangeRewriter.RewrittenBody) -> Void) {
        guard let rewriter else { return }
        ExchangeRewriter.rewrite(held, headers: headers, replacements: replacements, side: side, limit: rewriter.limit,
                                 cancellation: workCancellation, work: services.blockingWork, on: client.eventLoop)
            .assumeIsolated()
            .whenComplete { outcome in
                guard self.machine.phase == .forwarding else { return }
                let result = ExchangeRewriter.result(of: outcome, held: held, side: side)
                if let note = result.note { self.recorder.applied(rule: nil, note: note) }
                release(result)
            }
    }

    func writeReleasedResponse() {
        guard let (head, body) = rare?.releasedResponse else { return }
        rare?.releasedResponse = nil
        recorder.responseHead(head)
        recorder.responseBody(body)
        client.write(.head(head))
        if body.readableBytes > 0 {
            client.write(.body(.byteBuffer(body)))
        }
    }
}
