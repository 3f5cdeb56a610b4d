import Foundation
import NIOCore
import NIOHTTP1

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
        let id = breakpoints.hold(side: side, method: recorder.flow.method, url: recorder.flow.url, status: status) { decision in
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
        }
        perform(side == .request ? machine.requestReleased() : machine.responseReleased())
    }
}
