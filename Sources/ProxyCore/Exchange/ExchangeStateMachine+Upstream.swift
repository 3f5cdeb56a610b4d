/// The upstream side of a forwarded exchange: the connection, the response, and what goes
/// back to the pool.
extension ExchangeStateMachine {
    /// No connection could be taken at once: a new one is being opened.
    public mutating func upstreamConnecting() -> [ExchangeAction] {
        guard phase == .forwarding, upstream == .notOpened || upstream == .gone else { return [] }
        upstream = .opening
        guard !pausedForConnecting else { return [] }
        pausedForConnecting = true
        return [.pauseClientReads(.connecting)]
    }

    /// - Parameters:
    ///   - reused: a pooled (or the client's bound) connection, which the origin may have closed
    ///     meanwhile; a request on it may be retried once on a new one.
    ///   - boundToClient: the client's own bound connection (NTLM, Negotiate).
    ///   - multiplexed: a stream of an HTTP/2 connection. Origins speaking HTTP/2 rarely send
    ///     `100 Continue` (nginx never does), and a body they do not want costs nothing there
    ///     (they reset the stream): a client waiting for one is answered by the proxy at once,
    ///     as nginx and mitmproxy do, instead of stalling for its expect timeout.
    public mutating func upstreamConnected(reused: Bool, boundToClient: Bool = false,
                                           multiplexed: Bool = false) -> [ExchangeAction] {
        upstreamConnected(reused: reused, boundToClient: boundToClient, multiplexed: multiplexed, usingCommonLists: true)
    }

    /// `usingCommonLists: false` builds every list the general way: the invariant explorer checks
    /// that the common lists (`CommonActions`) are what it would build, state included.
    mutating func upstreamConnected(reused: Bool, boundToClient: Bool, multiplexed: Bool,
                                    usingCommonLists: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, !isConnected else {
            // The exchange ended while the connection was being opened.
            return [.closeUpstream]
        }
        upstream = .connected(reused: reused)
        // A new connection is bound only if this exchange's heads bind it (a retry after the
        // client's bound connection failed starts unbound).
        self.boundToClient = boundToClient
        // The common cases, nothing buffered: a request read whole (written whole here, so no
        // `100 Continue` is answered for it), or one whose end is still to come (a pooled
        // connection is there before it). Lists made once.
        if usingCommonLists && !hasBufferedBody && requestState == .ended {
            requestWritten = true
            return resumingClientReads(CommonActions.sendWholeRequest, CommonActions.sendWholeRequestResumingReads)
        }
        if usingCommonLists && !hasBufferedBody && requestState == .streaming && !answersContinue(multiplexed: multiplexed) {
            return resumingClientReads(CommonActions.sendHead, CommonActions.sendHeadResumingReads)
        }
        var actions: [ExchangeAction] = []
        actions.reserveCapacity(5)
        if requestState == .streaming || requestState == .ended {
            actions.append(.sendRequestHead)
            if hasBufferedBody {
                hasBufferedBody = false
                actions.append(.sendBufferedRequestBody)
            }
            if requestState == .ended {
                requestWritten = true
                actions.append(.sendRequestEnd)
            }
            actions.append(.flushUpstream)
        }
        if answersContinue(multiplexed: multiplexed) {
            answeredContinue = true
            actions.append(.writeContinue)
        }
        // Last: resuming may hand over held reads at once (an HTTP/2 stream does), and the body
        // parts they carry must follow the head and the buffered parts.
        if pausedForConnecting {
            pausedForConnecting = false
            actions.append(.resumeClientReads(.connecting))
        }
        return actions
    }

    /// Whether the proxy answers `100 Continue` itself once connected (see `upstreamConnected`).
    private func answersContinue(multiplexed: Bool) -> Bool {
        multiplexed && request.expectsContinue && request.understandsInterim && !answeredContinue
            && !requestWritten && !responseHeadReceived
    }

    /// `actions`, or `resuming` (the same with `.resumeClientReads(.connecting)` last) when the
    /// client's reads were paused for the connection.
    private mutating func resumingClientReads(_ actions: [ExchangeAction], _ resuming: [ExchangeAction]) -> [ExchangeAction] {
        guard pausedForConnecting else { return actions }
        pausedForConnecting = false
        return resuming
    }

    var isConnected: Bool {
        if case .connected = upstream { return true }
        return false
    }

    public mutating func upstreamConnectFailed(_ failure: ProxyFailure) -> [ExchangeAction] {
        guard phase == .forwarding, upstream == .opening else { return [] }
        var actions: [ExchangeAction] = []
        if pausedForConnecting {
            pausedForConnecting = false
            actions.append(.resumeClientReads(.connecting))
        }
        upstream = .gone
        return actions + fail(failure)
    }

    public mutating func upstreamWritabilityChanged(isWritable: Bool) -> [ExchangeAction] {
        guard phase == .forwarding else { return [] }
        if isWritable {
            guard pausedForUpstreamBusy else { return [] }
            pausedForUpstreamBusy = false
            return [.resumeClientReads(.upstreamBusy)]
        }
        guard case .connected = upstream, !pausedForUpstreamBusy else { return [] }
        pausedForUpstreamBusy = true
        return [.pauseClientReads(.upstreamBusy)]
    }

    /// A response head from the origin: interim (relayed to a client that understands it) or
    /// final (judged: status, framing, upgrade; planned: how the client gets it).
    /// - Parameters:
    ///   - fields: the head's fields as parsed.
    ///   - keepAlive: the origin keeps the connection open after this response.
    ///   - bindsConnection: the exchange ties the connection to its client (`ConnectionBoundAuth`).
    ///
    /// Inlinable so that the scan of `fields` is specialized for the caller's header list (the
    /// scan is pure: made for every head, it is judged only where a final response is).
    @inlinable
    public mutating func upstreamHead<Fields: Sequence>(status: Int, fields: Fields, keepAlive: Bool,
                                                        bindsConnection: Bool) -> [ExchangeAction]
        where Fields.Element == (name: String, value: String) {
        upstreamHead(status: status, framingFields: FramingFields(fields), keepAlive: keepAlive,
                     bindsConnection: bindsConnection)
    }

    @usableFromInline
    mutating func upstreamHead(status: Int, framingFields: FramingFields, keepAlive: Bool,
                               bindsConnection: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, case .connected = upstream, response == .awaitingHead, let forwarding
        else { return [] }
        let host = forwarding.host
        if status < 100 {
            return fail(.upstreamProtocolError(host: host, reason: "status \(status) is not an HTTP status code"))
        }
        if status < 200 && status != 101 {
            interimResponses += 1
            guard interimResponses <= Self.maxInterimResponses else {
                return fail(.upstreamProtocolError(
                    host: host, reason: "more than \(Self.maxInterimResponses) interim (1xx) responses"))
            }
            // A 100 the proxy already sent itself for a held body is not sent twice.
            guard request.understandsInterim, !(answeredContinue && status == 100) else { return [] }
            clientSawResponse = true
            return [.writeInterimHead, .flushClient]
        }
        if status == 101 && (!forwarding.forwardsUpgrade || !requestEnded) {
            // An upgrade nobody asked for, or one that cuts off a request body still being sent:
            // neither side could be relayed as bytes safely.
            return fail(.upstreamProtocolError(
                host: host,
                reason: forwarding.forwardsUpgrade ? "switched protocols before the request body ended"
                    : "101 Switching Protocols for a request that did not ask to upgrade"))
        }
        let framing: ResponseFraming.Decision
        switch ResponseFraming.decide(framingFields, status: status, isHeadRequest: request.isHead) {
        case .success(let decision):
            framing = decision
        case .failure(let refusal):
            return fail(.upstreamProtocolError(host: host, reason: refusal.reason))
        }
        responseHeadReceived = true
        originKeepAlive = keepAlive
        if bindsConnection { boundToClient = true }
        let switching = status == 101
        // A failed upgrade leaves the client's request parser stopped: the connection is done.
        var close = !request.keepAlive || inputClosed || (forwarding.forwardsUpgrade && !switching)
        if request.isHTTP10 {
            // An HTTP/1.0 client reads a body without a length until the connection closes.
            let hasLength: Bool
            if case .contentLength = framing.framing { hasLength = true } else { hasLength = framing.advertisedLength != nil }
            let bodyless = request.isHead || status == 204 || status == 304
            if !hasLength && !bodyless { close = true }
        }
        let plan = ResponseHeadPlan(framing: framing, close: close, switchingProtocols: switching)
        responsePlan = plan
        if forwarding.mayHoldResponse && !switching {
            response = .awaitingHoldDecision
            return [.prepareResponseHead(plan), .decideResponseHold]
        }
        response = .streaming
        responseHeadWritten = true
        clientSawResponse = true
        return [.prepareResponseHead(plan), .writeResponseHead]
    }

    public mutating func responseHoldDecided(hold: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, response == .awaitingHoldDecision else { return [] }
        if hold {
            response = .holding
            return []
        }
        response = .streaming
        responseHeadWritten = true
        clientSawResponse = true
        return [.writeResponseHead]
    }

    public mutating func upstreamBody() -> [ExchangeAction] {
        guard phase == .forwarding else { return [] }
        switch response {
        case .holding: return [.holdResponseBody]
        case .streaming: return CommonActions.writeBody
        default: return []
        }
    }

    /// The origin's read is over: what it carried goes to the client now.
    public mutating func upstreamReadComplete() -> [ExchangeAction] {
        guard phase == .forwarding, case .connected = upstream else { return [] }
        return CommonActions.flushClient
    }

    /// The response ended. The connection goes back to the pool only when both messages ended
    /// where both sides agree they did: the request was written whole, the origin keeps the
    /// connection, nothing was upgraded, and the body's end did not depend on a close.
    public mutating func upstreamEnd() -> [ExchangeAction] {
        upstreamEnd(usingCommonLists: true)
    }

    /// `usingCommonLists: false`: see `upstreamConnected(reused:boundToClient:multiplexed:usingCommonLists:)`.
    mutating func upstreamEnd(usingCommonLists: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, response == .streaming || response == .holding, let forwarding,
              let plan = responsePlan else { return [] }
        if plan.switchingProtocols {
            response = .ended
            upstream = .gone
            phase = .finished
            return [.record(error: nil), .switchToByteRelay]
        }
        let reusable = requestWritten && originKeepAlive && !forwarding.forwardsUpgrade && plan.framing.framing != .untilClose
        let release: ExchangeAction = reusable ? .checkInUpstream(boundToClient: boundToClient) : .closeUpstream
        upstream = .gone
        upstreamReadsPaused = false
        if response == .holding {
            response = .awaitingRelease
            return [release, .responseHeld]
        }
        response = .ended
        // The common case, a kept connection to the pool and a kept client: a list made once.
        if usingCommonLists && reusable && !boundToClient && !plan.close && requestEnded {
            endExchange()
            return CommonActions.checkInAndComplete
        }
        return [release] + completing(plan)
    }

    /// The connection failed or closed before the exchange released it.
    /// - Parameter mayRetry: the failure allows sending the request again (a closed connection,
    ///   not a timeout: an origin that took too long must not get the request twice).
    public mutating func upstreamFailed(_ failure: ProxyFailure, mayRetry: Bool) -> [ExchangeAction] {
        guard phase == .forwarding, case .connected(let reused) = upstream else { return [] }
        upstream = .gone
        upstreamReadsPaused = false
        // A pooled connection the origin had already closed: send a body-less request once more
        // on a new connection, as browsers do — a safe method only, and only while nothing of
        // a response reached the client (RFC 9110 §9.2.2: a POST must never run twice).
        if reused && mayRetry && !responseHeadReceived && !requestHadBody && !clientSawResponse && request.isSafe {
            requestWritten = false
            return [.openUpstream(allowReuse: false)]
        }
        return fail(failure)
    }

    // MARK: holds

    /// The held request body grew past what may be held: it is sent as it is, and the rest
    /// streams.
    public mutating func requestHoldOverflowed() -> [ExchangeAction] {
        guard phase == .forwarding, requestState == .holding else { return [] }
        requestState = .streaming
        hasBufferedBody = true
        return [.bufferReleasedRequestBody, .openUpstream(allowReuse: true)]
    }

    /// The held request is released (rewritten or edited, or not): it goes to the origin now.
    public mutating func requestReleased() -> [ExchangeAction] {
        guard phase == .forwarding, requestState == .awaitingRelease else { return [] }
        requestState = .ended
        hasBufferedBody = true
        return [.bufferReleasedRequestBody, .openUpstream(allowReuse: true)]
    }

    /// The held response body grew past what may be held: what was held is written as it is.
    public mutating func responseHoldOverflowed() -> [ExchangeAction] {
        guard phase == .forwarding, response == .holding else { return [] }
        response = .streaming
        responseHeadWritten = true
        clientSawResponse = true
        return [.writeResponseHead, .writeHeldResponseBody]
    }

    /// The held response is released (rewritten or edited, or not): it goes to the client.
    public mutating func responseReleased() -> [ExchangeAction] {
        guard phase == .forwarding, response == .awaitingRelease, let plan = responsePlan else { return [] }
        response = .ended
        responseHeadWritten = true
        var actions: [ExchangeAction] = [.writeReleasedResponse]
        actions += completing(plan)
        return actions
    }

    /// Whoever held the exchange gave it up: the client is answered 502.
    public mutating func holdAborted() -> [ExchangeAction] {
        guard let side = heldSide else { return [] }
        return fail(.heldExchangeAborted(side: side))
    }

    /// Nobody released the held exchange in time: the client is answered 504.
    public mutating func holdTimedOut(seconds: Int64) -> [ExchangeAction] {
        guard let side = heldSide else { return [] }
        return fail(.heldExchangeTimedOut(side: side, seconds: seconds))
    }

    /// Which message waits for a release, if any.
    /// A person killed the held exchange at a breakpoint. A held request is answered `502`
    /// (`Proxy-Status` says why); a held response never reaches the client, whose connection is
    /// reset — an answer from the proxy could be taken for the origin's.
    public mutating func holdKilled() -> [ExchangeAction] {
        guard let side = heldSide else { return [] }
        let failure = ProxyFailure.heldExchangeAborted(side: side)
        guard side == "response" else { return fail(failure) }
        return finishing() + [.record(error: failure.message), .abortClient(reason: failure.message)]
    }

    var heldSide: String? {
        guard phase == .forwarding else { return nil }
        if requestState == .awaitingRelease { return "request" }
        if response == .awaitingRelease { return "response" }
        return nil
    }

    /// Records the complete exchange and ends the response; the client connection closes when
    /// the plan says so or when the request has not ended (its rest cannot be read as a next
    /// request).
    mutating func completing(_ plan: ResponseHeadPlan) -> [ExchangeAction] {
        endExchange()
        return [.record(error: nil), .completeResponse(close: plan.close || !requestEnded, requestEnded: requestEnded)]
    }

    private mutating func endExchange() {
        phase = .finished
        pausedForConnecting = false
        pausedForUpstreamBusy = false
    }
}
