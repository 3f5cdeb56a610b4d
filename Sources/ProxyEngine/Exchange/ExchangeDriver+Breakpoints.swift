import Foundation
import NIOCore
import NIOHTTP1
import ProxyModel

/// An exchange at a breakpoint (`Breakpoints`): its request held whole before it is sent, or its
/// response held whole before the client sees it, in the machine's hold state, until a person
/// accepts or kills it or the hold times out. The flow notes how long it was held and how it
/// ended.
extension ExchangeDriver {
    /// The most body a hold keeps (the capture's cap, at least 1 MiB); a longer body goes on
    /// unheld, noted.
    var heldBodyLimit: Int { max(services.configuration.maxCapturedBodyBytes, 1 << 20) }

    /// Whether the response just prepared stops at a breakpoint (the filter sees its head).
    func stopsResponseAtBreakpoint() -> Bool {
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
                                  request: side == .request ? heldRequestForEditing() : nil) { decision in
            loop.execute { driver.value.breakpointDecided(decision, side: side, since: since) }
        }
        rareState.holdID = id
        loop.assumeIsolated().scheduleTask(in: breakpoints.timeout) { breakpoints.decide(id, .timedOut) }
    }

    private func breakpointDecided(_ decision: Breakpoints.Decision, side: Breakpoints.Side, since: NIODeadline) {
        rare?.holdID = nil
        guard machine.phase == .forwarding else { return }
        let seconds = String(format: "%.1f", Double((client.eventLoop.now - since).nanoseconds) / 1e9)
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
        }
        perform(side == .request ? machine.requestReleased() : machine.responseReleased())
    }

    /// The held request as it will be forwarded: method, absolute URL, headers, body.
    private func heldRequestForEditing() -> Breakpoints.HeldRequest {
        let scheme = upstreamTLS == nil ? "http" : "https"
        let defaultPort = scheme == "https" ? 443 : 80
        let host = key.host.contains(":") ? "[\(key.host)]" : key.host
        let url = "\(scheme)://\(host)" + (key.port == defaultPort ? "" : ":\(key.port)") + upstreamHead.uri
        var body: [UInt8] = []
        for part in rare?.releasedRequestBody ?? [] { body += part.readableBytesView }
        return Breakpoints.HeldRequest(method: upstreamHead.method.rawValue, url: url,
                                       headers: ExchangeRecorder.fields(upstreamHead.headers), body: body)
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
}
