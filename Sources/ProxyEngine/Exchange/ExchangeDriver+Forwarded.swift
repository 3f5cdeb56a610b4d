import NIOCore
import NIOHTTP1

/// The origin side of a flow: when a rule changed the request (map-remote, rewrite) the
/// recorder keeps it as forwarded, and when a rewrite changed the response it keeps the
/// origin's. Nothing is kept for a rule that changed nothing, so flows without a change cost
/// nothing more.
extension ExchangeDriver {
    /// Whether the rules sent the request somewhere other than the client's URL (map-remote).
    static func routedElsewhere(_ request: ClientRequest, _ target: UpstreamDestination) -> Bool {
        target.scheme != request.scheme || target.host != request.host || target.port != request.port
            || target.pathAndQuery != request.pathAndQuery || target.authority != request.authority
    }

    /// Records the upstream head as forwarded, with `body` when a rewrite changed it.
    func recordForwardedRequest(body: [UInt8]?) {
        recorder.forwarded(upstreamHead, scheme: upstreamTLS == nil ? "http" : "https", host: key.host,
                           port: key.port, body: body)
    }

    /// A held request body was rewritten (`result`): records the request as
    /// forwarded when the body or, earlier, its URL or headers changed.
    func recordForwardedRequest(after result: ExchangeRewriter.RewrittenBody) {
        let bodyChanged = result.changed
        if bodyChanged || requestChanged {
            recordForwardedRequest(body: bodyChanged ? result.body : nil)
        }
    }

    /// Keeps the origin's head while a rewrite may still change the body, and records it at once
    /// when the rewrite changed the status or headers.
    func keepOriginHead(_ head: HTTPResponseHead) {
        rareState.originHead = head
        if rare?.responseHeadEdited == true { recorder.originResponse(head, body: nil) }
    }

    /// A held response body was rewritten: records the origin's response with its body when the
    /// rewrite changed the body.
    func recordOriginResponse(after result: ExchangeRewriter.RewrittenBody, original: HeldBody) {
        guard let originHead = rare?.originHead, result.changed else { return }
        recorder.originResponse(originHead, body: original)
    }
}
