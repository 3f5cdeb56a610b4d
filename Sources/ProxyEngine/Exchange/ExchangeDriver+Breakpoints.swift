import Foundation
import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel

/// An exchange at a breakpoint (`Breakpoints`): its request held whole before it is sent, or its
/// response held whole before the client sees it, in the machine's hold state, until a person
/// accepts or kills it or the hold times out. The flow notes how long it was held and how it
/// ended.
extension ExchangeDriver {
    /// The most body a hold keeps (the capture's cap, at least 1 MiB); a longer body goes on
    /// unheld, noted.
    var heldBodyLimit: Int { max(services.configuration.maxCapturedBodyBytes, 1 << 20) }

    /// Whether the response just prepared stops at a breakpoint (the filter sees its head, unless
    /// the request already decided it).
    func stopsResponseAtBreakpoint() -> Bool {
        if rare?.breakpointResponseForecast == true { return true }
        let breakpoints = services.breakpoints
        guard breakpoints.isActive, let head = preparedHead else { return false }
        var flow = recorder.flow
        flow.status = Int(head.status.code)
        flow.reason = head.status.reasonPhrase
        flow.responseHeaders = ExchangeRecorder.fields(head.headers)
        return breakpoints.matches(flow)
    }

    /// The held request (rewritten if a rule said so) goes on, or first waits at its breakpoint.
    func releaseHeldRequest() {
        guard rare?.breakpointOnRequest == true else {
            perform(machine.requestReleased())
            return
        }
        rare?.breakpointOnRequest = false
        park(.request)
    }

    /// The held response (rewritten if a rule said so) goes out, or first waits at its breakpoint.
    func releaseHeldResponse() {
        guard rare?.breakpointOnResponse == true else {
            perform(machine.responseReleased())
            return
        }
        rare?.breakpointOnResponse = false
        park(.response)
    }

    private func park(_ side: Breakpoints.Side) {
        let loop = client.eventLoop
        let since = loop.now
        let breakpoints = services.breakpoints
        let status = side == .response ? rare?.releasedResponse.map { Int($0.head.status.code) } : nil
        let driver = NIOLoopBound(self, eventLoop: loop)  // decisions come from other threads: back to its loop
        let id = breakpoints.hold(side: side, method: recorder.flow.method, url: recorder.flow.url, status: status,
                                  request: side == .request ? heldRequestForEditing() : nil,
                                  response: side == .response ? heldResponseForEditing() : nil) { decision in
            loop.execute { driver.value.breakpointDecided(decision, side: side, since: since) }
        }
        rareState.holdID = id
        rareState.holdSince = since
        loop.assumeIsolated().scheduleTask(in: breakpoints.timeout) { breakpoints.decide(id, .timedOut) }
    }

    private func breakpointDecided(_ decision: Breakpoints.Decision, side: Breakpoints.Side, since: NIODeadline) {
        rare?.holdID = nil
        guard machine.phase == .forwarding else { return }
        let now = client.eventLoop.now
        recorder.held(from: since, to: now)
        let seconds = String(format: "%.1f", Double((now - since).nanoseconds) / 1e9)
        switch decision {
        case .accept:
            recorder.applied(rule: nil, note: "breakpoint: \(side.rawValue) held \(seconds) s, accepted")
        case .timedOut:
            recorder.applied(rule: nil, note: "breakpoint: \(side.rawValue) held \(seconds) s, released unchanged "
                             + "(nobody decided within --intercept-timeout)")
        case .kill:
            recorder.applied(rule: nil, note: "breakpoint: \(side.rawValue) held \(seconds) s, killed")
            perform(machine.holdKilled())
            return
        case .edit(let edited):
            recorder.applied(rule: nil, note: "breakpoint: \(side.rawValue) held \(seconds) s, edited")
            applyEdit(edited)
        case .editResponse(let edited):
            recorder.applied(rule: nil, note: "breakpoint: \(side.rawValue) held \(seconds) s, edited")
            applyResponseEdit(edited)
        }
        perform(side == .request ? machine.requestReleased() : machine.responseReleased())
    }

    /// The held request as it will be forwarded: method, absolute URL, headers, body.
    private func heldRequestForEditing() -> HeldContent<Breakpoints.HeldRequest> {
        let scheme = upstreamTLS == nil ? "http" : "https"
        let defaultPort = scheme == "https" ? 443 : 80
        let host = key.host.contains(":") ? "[\(key.host)]" : key.host
        let origin = "\(scheme)://\(host)" + (key.port == defaultPort ? "" : ":\(key.port)")
        let (method, uri, headers) = (upstreamHead.method.rawValue, upstreamHead.uri, upstreamHead.headers)
        let parts = rare?.releasedRequestBody ?? []
        return HeldContent(origin: origin) {
            var body: [UInt8] = []
            for part in parts { body += part.readableBytesView }
            return Breakpoints.HeldRequest(method: method, url: origin + uri, headers: ExchangeRecorder.fields(headers), body: body)
        }
    }

    /// A person's edit of the held request: its method, path and query, headers and body go as
    /// written (framing decided again: a `Content-Length` for the body); the flow keeps it as
    /// forwarded.
    private func applyEdit(_ edited: Breakpoints.HeldRequest) {
        var headers = HTTPHeaders()
        for field in edited.headers where !["content-length", "transfer-encoding"].contains(field.name.lowercased()) {
            headers.add(name: field.name, value: field.value)
        }
        if !edited.body.isEmpty || ["POST", "PUT", "PATCH"].contains(edited.method.uppercased()) {
            headers.add(name: "Content-Length", value: String(edited.body.count))
        }
        let origin = URLOrigin.of(edited.url)
        let pathAndQuery = String(edited.url.dropFirst(origin.count))
        upstreamHead.method = HTTPMethod(rawValue: edited.method)
        upstreamHead.uri = pathAndQuery.isEmpty ? "/" : pathAndQuery
        upstreamHead.headers = headers
        requestTrailers = nil
        rareState.releasedRequestBody = edited.body.isEmpty ? [] : [ByteBuffer(bytes: edited.body)]
        requestChanged = true
        recordForwardedRequest(body: edited.body)
    }

    /// The held response as the client will get it: status, headers, body (still encoded).
    private func heldResponseForEditing() -> HeldContent<Breakpoints.HeldResponse>? {
        guard let (head, body) = rare?.releasedResponse else { return nil }
        return HeldContent(origin: "") {
            Breakpoints.HeldResponse(status: Int(head.status.code), reason: head.status.reasonPhrase,
                                     headers: ExchangeRecorder.fields(head.headers), body: Array(body.readableBytesView))
        }
    }

    /// A person's edit of the held response: status, reason, headers and body go to the client as
    /// written, framing decided again (a response to HEAD, a 204 or 304 has no body); whether the
    /// client's connection stays open is still the exchange's decision, so hop-by-hop fields come
    /// from the response as held. The flow keeps the response as it came as the origin's (unless
    /// a rewrite rule recorded the origin's already). Trailers go on only to an HTTP/2 client:
    /// HTTP/1.1 cannot carry them after a body framed by length.
    private func applyResponseEdit(_ edited: Breakpoints.HeldResponse) {
        guard let rare, let (held, heldBody) = rare.releasedResponse else { return }
        if recorder.flow.originResponse == nil {
            var original = HeldBody(limit: .max)
            _ = original.append(heldBody)
            recorder.originResponse(held, body: original)
        }
        var written = HTTPHeaders()
        for field in edited.headers { written.add(name: field.name, value: field.value) }
        let hop = HopByHopHeaders(connectionValues: written["connection"], forwardUpgrade: false)
        var headers = Self.filtered(written, keeping: hop, droppingFraming: true)
        for value in held.headers["connection"] { headers.add(name: "Connection", value: value) }
        var body = ByteBuffer()
        if isHeadRequest {
            for value in held.headers["content-length"] { headers.add(name: "Content-Length", value: value) }
        } else if edited.status != 204 && edited.status != 304 {
            headers.add(name: "Content-Length", value: String(edited.body.count))
            body.writeBytes(edited.body)
        }
        rare.releasedResponse = (HTTPResponseHead(version: held.version, status: Self.status(edited.status, edited.reason),
                                                  headers: headers), body)
        if clientVersion.major < 2 {
            responseTrailers = nil
            recorder.droppedResponseTrailers()
        }
    }

    /// `code` with `reason` as written: NIO's `init(statusCode:reasonPhrase:)` keeps its own
    /// phrase for the codes it knows.
    static func status(_ code: Int, _ reason: String) -> HTTPResponseStatus {
        let standard = HTTPResponseStatus(statusCode: code)
        guard !reason.isEmpty, reason != standard.reasonPhrase, let unsigned = UInt(exactly: code) else { return standard }
        return .custom(code: unsigned, reasonPhrase: reason)
    }
}
