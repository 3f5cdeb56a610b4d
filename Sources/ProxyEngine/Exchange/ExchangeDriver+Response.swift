import NIOCore
import NIOHTTP1
import ProxyCore

/// Response heads as the client gets them: shaped from the machine's plan (`ClientResponseHead`)
/// with a rewrite rule's edits, and interim (1xx) heads relayed without hop-by-hop fields.
extension ExchangeDriver {
    /// Shapes the client's head from the origin's and the plan, and keeps it until written.
    func prepareResponseHead(_ plan: ResponseHeadPlan) {
        guard let head = originResponseHead else { return }
        var clientHead = ClientResponseHead(from: head, plan: plan, clientVersion: clientVersion).head
        if clientHead.status.code == originStatus.code && clientHead.status.reasonPhrase == head.status.reasonPhrase {
            clientHead.status = originStatus  // the origin's phrase, unless a rewrite set a status
        }
        if let rewriter, !plan.switchingProtocols {
            let before = (clientHead.status.code, ExchangeRecorder.fields(clientHead.headers))
            rewriter.editResponseHead(&clientHead)
            rareState.responseHeadEdited = clientHead.status.code != before.0 || ExchangeRecorder.fields(clientHead.headers) != before.1
            keepOriginHead(HTTPResponseHead(version: head.version, status: originStatus, headers: head.headers))
        }
        preparedHead = clientHead
    }

    /// A rewrite of the response body holds the response whole (never one that has no body).
    func decideResponseHold() {
        var hold = false
        if let rewriter, let preparedHead, rewriter.holdsResponseBody(preparedHead, isHeadRequest: isHeadRequest) {
            rareState.heldResponse = HeldBody(limit: rewriter.limit)
            hold = true
        }
        if stopsResponseAtBreakpoint() {
            rareState.breakpointOnResponse = true
            if rare?.heldResponse == nil { rareState.heldResponse = HeldBody(limit: heldBodyLimit) }
            hold = true
        }
        perform(machine.responseHoldDecided(hold: hold))
    }

    func writePreparedHead() {
        guard let head = preparedHead else { return }
        recorder.responseHead(head)
        client.write(.head(head))
    }

    /// Relays a 1xx response (not 101) without hop-by-hop fields.
    func writeInterimHead() {
        guard let head = originResponseHead else { return }
        var headers = Self.withoutHopByHop(head.headers, forwardUpgrade: false)
        headers.remove(name: "content-length")
        headers.remove(name: "transfer-encoding")
        client.write(.head(HTTPResponseHead(version: clientVersion, status: originStatus, headers: headers)))
    }
}

extension TrailerFields {
    /// `trailers` without the fields a proxy must not pass on; nil when nothing is left.
    static func forwardable(_ trailers: HTTPHeaders) -> HTTPHeaders? {
        var kept = HTTPHeaders()
        for (name, value) in trailers where isForwardable(name) {
            kept.add(name: name, value: value)
        }
        return kept.isEmpty ? nil : kept
    }
}
