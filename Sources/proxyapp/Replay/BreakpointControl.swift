import ControlChannel
import FlowFilter
import Foundation
import ProxyAppUI
import ProxyEngine
import ProxyModel
import RequestComposer

/// Breakpoints as the CLI, the control channel and the TUI set and decide them: the filter read
/// in the filter language (`FlowFilter`: the engine takes only a predicate), holds listed and
/// decided by id.
struct BreakpointControl: Sendable {
    let breakpoints: Breakpoints

    /// Sets the filter (empty or nil clears it); the reason when it does not parse.
    func setFilter(_ text: String?) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            breakpoints.setFilter(nil, matches: nil)
            return nil
        }
        let filter: FlowFilter
        do {
            filter = try FlowFilter(parsing: text)
        } catch {
            return "bad intercept expression: \(error.description)"
        }
        if let problem = Self.problem(with: filter) { return problem }
        breakpoints.setFilter(text, matches: { filter.matches($0) }, forecast: { filter.verdictBeforeResponse($0) })
        return nil
    }

    /// Why `filter` cannot serve as a breakpoint filter: a hold is decided on a request's or a
    /// response's head, before any body arrives, so `~b` would never match (and `!~b` always).
    static func problem(with filter: FlowFilter) -> String? {
        guard filter.expression.readsBodies else { return nil }
        return "bad intercept expression: a breakpoint is decided before bodies arrive, so ~b, ~bq and ~bs cannot be used; "
            + "match on the URL, method or headers instead (~u, ~m, ~h)"
    }

    func controlHeld() -> [HeldExchange] {
        let now = Date()
        return breakpoints.held().map {
            HeldExchange(id: $0.id, side: $0.side.rawValue, method: $0.method, url: $0.url, status: $0.status,
                        seconds: now.timeIntervalSince($0.since))
        }
    }

    /// The control channel's `intercept`, `holds`, `accept` and `kill`.
    func handle(_ request: ControlRequest) -> ControlReply {
        switch request.command {
        case "intercept":
            if let problem = setFilter(request.filter) { return .failure(problem) }
            return ControlReply(ok: true, lines: [breakpoints.filterText.map { "intercept: \($0)" } ?? "intercept: off"])
        case "holds":
            var reply = ControlReply(ok: true, lines: [])
            reply.held = controlHeld()
            reply.filter = breakpoints.filterText
            return reply
        case "held":
            var reply = ControlReply(ok: true, lines: [])
            if let id = request.ids?.first, let held = breakpoints.heldRequest(Int(id)) {
                reply.heldRequest = ControlHTTPRequest(method: held.method, url: held.url,
                                                       headers: held.headers.map { ($0.name, $0.value) }, body: held.body)
            } else if let id = request.ids?.first, let held = breakpoints.heldResponse(Int(id)) {
                reply.heldResponse = ControlHTTPResponse(status: held.status, reason: held.reason,
                                                         headers: held.headers.map { ($0.name, $0.value) }, body: held.body)
            } else {
                return .failure("nothing is held with that id")
            }
            return reply
        case "edit":
            return edit(request)
        case "accept" where (request.ids ?? []).isEmpty:
            return ControlReply(ok: true, lines: ["accepted \(breakpoints.acceptAll())"])
        case "accept", "kill":
            let decision: Breakpoints.Decision = request.command == "accept" ? .accept : .kill
            let decided = (request.ids ?? []).filter { breakpoints.decide(Int($0), decision) }
            return ControlReply(ok: true, lines: ["\(request.command == "accept" ? "accepted" : "killed") \(decided.count)"])
        default:
            return .failure("unknown control command '\(TerminalText.escaped(String(request.command.prefix(40))))'")
        }
    }

    /// The control channel's `edit`: a held request or response goes on as the message says.
    private func edit(_ request: ControlRequest) -> ControlReply {
        guard let id = request.ids?.first.flatMap({ Int(exactly: $0) }) else {
            return .failure("edit needs the held exchange's id")
        }
        let refusal: String?
        if let composed = request.request, let body = composed.bodyBytes, !composed.hasMalformedHeaders {
            refusal = edit(id, Breakpoints.HeldRequest(method: composed.method, url: composed.url,
                                                       headers: composed.headerPairs.map { HeaderField(name: $0.0, value: $0.1) }, body: body))
        } else if let composed = request.response, let body = composed.bodyBytes, !composed.hasMalformedHeaders {
            refusal = edit(id, Breakpoints.HeldResponse(status: composed.status, reason: composed.reason,
                                                        headers: composed.headerPairs.map { HeaderField(name: $0.0, value: $0.1) }, body: body))
        } else {
            refusal = "edit needs the request or the response to send: headers as [name, value] pairs, the body in base64"
        }
        return refusal.map(ControlReply.failure) ?? ControlReply(ok: true, lines: ["edited 1"])
    }

    /// Lets the request held as `id` go on as `edited`; why not, in words.
    func edit(_ id: Int, _ edited: Breakpoints.HeldRequest) -> String? {
        if let problem = Breakpoints.problem(in: edited) { return "the edited request cannot be sent: \(problem)" }
        guard breakpoints.decide(id, .edit(edited)) else {
            return "#\(id) is not a held request, or the edit changes where it goes (the host cannot change at a breakpoint)"
        }
        return nil
    }

    /// Sends `edited` to the client of the response held as `id`; why not, in words.
    func edit(_ id: Int, _ edited: Breakpoints.HeldResponse) -> String? {
        if let problem = Breakpoints.problem(in: edited) { return "the edited response cannot be sent: \(problem)" }
        guard breakpoints.decide(id, .editResponse(edited)) else {
            return "#\(id) is not a held response (it was decided, or it is a request)"
        }
        return nil
    }

    /// The TUI's view of these breakpoints, in this process.
    var forTUI: TUIBreakpoints {
        let control = self
        return TUIBreakpoints(
            state: {
                TUIBreakpoints.State(filter: control.breakpoints.filterText,
                                     held: control.controlHeld())
            },
            setFilter: { control.setFilter($0) },
            decide: { id, accept in control.breakpoints.decide(id, accept ? .accept : .kill) },
            acceptAll: { control.breakpoints.acceptAll() },
            heldRequest: { id in
                control.breakpoints.heldRequest(id).map {
                    TUIComposedRequest(method: $0.method, url: $0.url, headers: $0.headers, body: $0.body, replayOf: nil)
                }
            },
            edit: { id, request in
                control.edit(id, Breakpoints.HeldRequest(method: request.method, url: request.url, headers: request.headers,
                                                         body: request.body))
            },
            heldResponse: { id in
                control.breakpoints.heldResponse(id).map {
                    ComposedResponse(status: $0.status, reason: $0.reason, headers: $0.headers, body: $0.body)
                }
            },
            editResponse: { id, response in
                control.edit(id, Breakpoints.HeldResponse(status: response.status, reason: response.reason, headers: response.headers,
                                                          body: response.body))
            })
    }
}
