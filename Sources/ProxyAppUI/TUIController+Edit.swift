import CaptureStore
import Foundation
import ProxyModel
import RequestComposer
import TerminalUI

/// A request written or changed by a person, sent through the proxy by the TUI (`R`).
public struct TUIComposedRequest: Sendable, Hashable {
    public var method: String
    public var url: String
    public var headers: [HeaderField]
    public var body: [UInt8]
    /// The flow it was edited from: the new flow links to it (`↻`).
    public var replayOf: Int64?

    public init(method: String, url: String, headers: [HeaderField], body: [UInt8], replayOf: Int64?) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.replayOf = replayOf
    }
}

/// An edit waiting for, or coming back from, the editor.
struct EditSession: Sendable, Hashable {
    /// The flow edited and resent; nil when a held request is edited.
    var flowID: Int64?
    /// The held exchange edited (it goes on as saved); nil for a resend.
    var holdID: Int? = nil
    /// The held exchange is a response: the text is `ResponseText`'s.
    var holdsResponse = false
    /// `https://host:port` of the flow: a request line with only a path goes there.
    var origin: String
    var text: String
}

/// `R`: the selected flow's request opens in `$VISUAL`/`$EDITOR` as raw HTTP (request line,
/// headers, the body decoded); saved, it is sent through the proxy as a new flow linked to the
/// original. A request that does not parse reopens the editor with the error on top; an emptied
/// file cancels. The runner lends the terminal to the editor (`takePendingEdit`).
extension TUIController {
    /// Lines the editor shows first; `RequestText` skips `#` lines before the request line.
    static let editHelp = "edit the request, save and quit to send it through the proxy; empty the file to cancel"

    func editAndResend() {
        if let held = breakpointView.state?.held, !held.isEmpty, let breakpoints = context.breakpoints {
            editHeld(held[min(breakpointView.selection, held.count - 1)], breakpoints: breakpoints)
            return
        }
        guard context.send != nil else {
            message = StatusMessage(.error, "no proxy to send through: start one on this data directory (proxyapp run)")
            return
        }
        guard let id = selectedID else {
            message = StatusMessage(.info, "nothing to edit: the view is empty")
            return
        }
        let repository = repository
        message = StatusMessage(.info, "opening flow #\(id)'s request in the editor…")
        worker.perform("cannot open the request in the editor") {
            guard let flow = try repository.flow(id: id) else {
                return [.message(StatusMessage(.error, "flow #\(id) is no longer in the capture"))]
            }
            guard flow.kind == .http, flow.method.uppercased() != "CONNECT" else {
                return [.message(StatusMessage(.error, "flow #\(id) is a tunnel of opaque bytes: there is no request to edit"))]
            }
            guard !flow.requestBody.truncated else {
                return [.message(StatusMessage(.error, "flow #\(id)'s request body was cut at capture: it cannot be edited whole "
                                               + "(raise --max-body-size)"))]
            }
            do {
                let text = try RequestText.render(method: flow.method, url: flow.url, httpVersion: "HTTP/1.1",
                                                  headers: flow.requestHeaders, body: [UInt8](flow.requestBody.bytes),
                                                  comments: [Self.editHelp])
                let defaultPort = flow.scheme == "https" ? 443 : 80
                let origin = "\(flow.scheme)://\(flow.urlHost)" + (flow.port == defaultPort ? "" : ":\(flow.port)")
                return [.editReady(EditSession(flowID: id, origin: origin, text: text))]
            } catch let error as ComposeError {
                return [.message(StatusMessage(.error, "flow #\(id) cannot be edited as text: \(error.message)"))]
            }
        }
    }

    /// `R` while exchanges are held: the selected held request as it will be forwarded, or the
    /// held response as the client will get it.
    private func editHeld(_ item: TUIBreakpoints.Held, breakpoints: TUIBreakpoints) {
        guard item.side == "request" else {
            editHeldResponse(item, breakpoints: breakpoints)
            return
        }
        worker.perform("cannot open the held request in the editor") {
            guard let request = breakpoints.heldRequest(item.id) else {
                return [.message(StatusMessage(.error, "#\(item.id) is no longer held"))]
            }
            do {
                let text = try RequestText.render(method: request.method, url: request.url, httpVersion: "HTTP/1.1",
                                                  headers: request.headers, body: request.body,
                                                  comments: ["edit held request #\(item.id), save and quit: it goes on as saved "
                                                             + "(the host cannot change); empty the file to keep it held"])
                return [.editReady(EditSession(flowID: nil, holdID: item.id, origin: URLOrigin.of(request.url), text: text))]
            } catch let error as ComposeError {
                return [.message(StatusMessage(.error, "#\(item.id) cannot be edited as text: \(error.message)"))]
            }
        }
    }

    private func editHeldResponse(_ item: TUIBreakpoints.Held, breakpoints: TUIBreakpoints) {
        worker.perform("cannot open the held response in the editor") {
            guard let response = breakpoints.heldResponse(item.id) else {
                return [.message(StatusMessage(.error, "#\(item.id) is no longer held"))]
            }
            do {
                let text = try ResponseText.render(status: response.status, reason: response.reason, headers: response.headers,
                                                   body: response.body,
                                                   comments: ["edit held response #\(item.id) (\(item.method) \(item.url)), save and quit: "
                                                              + "the client gets it as saved; empty the file to keep it held"])
                return [.editReady(EditSession(flowID: nil, holdID: item.id, holdsResponse: true, origin: "", text: text))]
            } catch let error as ComposeError {
                return [.message(StatusMessage(.error, "#\(item.id) cannot be edited as text: \(error.message)"))]
            }
        }
    }

    /// The edit the runner should open in the editor now, once.
    func takePendingEdit() -> String? {
        pendingEdit?.text
    }

    /// What the editor left (or why it failed): sent, reopened with the error, or cancelled.
    func editorFinished(_ result: Result<String, ExternalEditor.Failure>) {
        guard let session = pendingEdit else { return }
        pendingEdit = nil
        let saved: String
        switch result {
        case .failure(let failure):
            message = StatusMessage(.error, failure.description)
            return
        case .success(let text):
            saved = text
        }
        let lines = saved.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }) else {
            message = StatusMessage(.info, session.holdID == nil ? "edit cancelled: nothing was sent"
                                    : "edit cancelled: #\(session.holdID!) is still held")
            return
        }
        if session.holdsResponse, let holdID = session.holdID {
            finishResponseEdit(saved, holdID: holdID, session: session, lines: lines)
            return
        }
        let request: ComposedRequest
        do {
            request = try RequestText.parse(saved, defaultOrigin: session.origin)
        } catch let error as ComposeError {
            reopen(session, error: error, lines: lines)
            return
        } catch {
            message = StatusMessage(.error, "the edited request cannot be read: nothing was sent")
            return
        }
        let composed = TUIComposedRequest(method: request.method, url: request.url, headers: request.headers, body: request.body,
                                          replayOf: session.flowID)
        if let holdID = session.holdID, let breakpoints = context.breakpoints {
            worker.perform("the edited request did not go on") {
                let refusal = breakpoints.edit(holdID, composed)
                let text = refusal.map { "#\(holdID) did not go on as edited: \($0)" } ?? "edited #\(holdID): it goes on as saved"
                return [.message(StatusMessage(refusal == nil ? .info : .error, TerminalText.escaped(text))),
                        .breakpoints(breakpoints.state())]
            }
            return
        }
        guard let send = context.send else { return }
        message = StatusMessage(.info, "sending the edited request…")
        worker.perform("the edited request was not sent", lane: .long) {
            let result = send(composed)
            return [.message(StatusMessage(result.ok ? .info : .error, result.message))]
        }
    }

    /// The saved text of a held response: sent to its client, or back to the editor with the
    /// reason on top.
    private func finishResponseEdit(_ saved: String, holdID: Int, session: EditSession, lines: [Substring]) {
        let response: ComposedResponse
        do {
            response = try ResponseText.parse(saved)
        } catch let error as ComposeError {
            reopen(session, error: error, lines: lines)
            return
        } catch {
            message = StatusMessage(.error, "the edited response cannot be read: #\(holdID) is still held")
            return
        }
        guard let breakpoints = context.breakpoints else { return }
        worker.perform("the edited response did not go on") {
            let refusal = breakpoints.editResponse(holdID, response)
            let text = refusal.map { "#\(holdID) was not changed: \($0)" } ?? "edited #\(holdID): the client gets it as saved"
            return [.message(StatusMessage(refusal == nil ? .info : .error, TerminalText.escaped(text))),
                    .breakpoints(breakpoints.state())]
        }
    }

    /// Back to the editor, the person's text kept, the reason on top.
    private func reopen(_ session: EditSession, error: ComposeError, lines: [Substring]) {
        let kept = lines.drop { $0.hasPrefix("# error:") }.joined(separator: "\n")
        var again = session
        again.text = "# error: \(error.description)\n" + kept
        pendingEdit = again
    }
}
