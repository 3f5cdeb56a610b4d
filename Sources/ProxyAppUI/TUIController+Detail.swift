import CaptureStore
import Foundation
import ProxyModel
import TerminalUI

/// The detail view: opening a flow loads it in the background (headers at once, decoded bodies
/// when ready), so Enter on a flow with a 16 MiB body draws its first frame without waiting.
extension TUIController {
    func openDetail() {
        guard let id = selectedID else { return }
        var state = FlowDetailState()
        state.wraps = detailWraps
        // The words a full-text search (`~fts`) of the search or the filter found are marked.
        state.highlight = WordHighlight((search?.expression.fullTextSearches ?? [])
                                        + (filter?.expression.fullTextSearches ?? []))
        screen = .detail(DetailSession(id: id, state: state, content: nil))
        let repository = repository
        let worker = worker
        let timeZone = context.timeZone
        worker.perform("cannot read flow #\(id)") {
            guard let flow = try repository.flow(id: id) else {
                return [.message(StatusMessage(.error, "flow #\(id) is no longer in the capture"))]
            }
            worker.post(.detail(id: id, content: FlowDetailContent(flow: flow, requestBody: nil, responseBody: nil, timeZone: timeZone)))
            let request = BodyDocument(body: flow.requestBody, headers: flow.requestHeaders)
            let response = BodyDocument(body: flow.responseBody, headers: flow.responseHeaders)
            // The origin side's bodies, only where a rule changed them.
            let forwarded = flow.forwardedRequest.flatMap { sent in sent.body.map { BodyDocument(body: $0, headers: sent.headers) } }
            let origin = flow.originResponse.flatMap { got in got.body.map { BodyDocument(body: $0, headers: got.headers) } }
            var content = FlowDetailContent(flow: flow, requestBody: request, responseBody: response, timeZone: timeZone,
                                            forwardedRequestBody: forwarded, originResponseBody: origin)
            if content.isWebSocket {
                content.messages = try repository.messages(flowID: id, limit: Self.messagesShown)
            }
            return [.detail(id: id, content: content)]
        }
    }

    /// Messages of a WebSocket loaded into its tab at most (the tab says how many more there are).
    static let messagesShown = 10_000

    /// While a WebSocket's detail is open, its flow and new messages are read again about once a
    /// second, so the tab follows the conversation live.
    func refreshOpenWebSocket(now: Date = Date()) {
        guard case .detail(var session) = screen, let content = session.content, content.isWebSocket,
              now.timeIntervalSince(session.refreshedAt) >= (session.refreshing ? 5 : 1)  // a failed read is retried
        else { return }
        session.refreshing = true
        session.refreshedAt = now
        screen = .detail(session)
        let id = session.id
        let known = content.messages?.count ?? 0
        let repository = repository
        worker.perform("cannot read flow #\(id)") {
            guard let flow = try repository.flow(id: id) else { return [] }
            let newer = known < Self.messagesShown && flow.messageCount > known
                ? try repository.messages(flowID: id, offset: known, limit: Self.messagesShown - known) : []
            return [.webSocketUpdate(id: id, flow: flow, newMessages: newer)]
        }
    }

    func handleDetail(_ session: DetailSession, _ key: Key) {
        if key == .control("c") { return perform(.quit) }
        guard let action = KeyBindings.detail.action(for: key) else { return sayUnknown(key) }
        perform(action)
    }

    /// Detail-only actions (the rest go through `perform`).
    func performDetailAction(_ action: UIAction) {
        guard case .detail(var session) = screen else { return }
        switch action {
        case .closeDetail:
            screen = .list
        case .detail(let detailAction):
            // Until the flow (with its bodies) is loaded, keys wait in order: none is dropped.
            if let content = session.content, session.queued.isEmpty {
                if detailAction == .toggleOriginSide, !content.flow.hasOriginSide {
                    message = StatusMessage(.info, "no rule changed this request or its response: there is one view only")
                }
                session.state.apply(detailAction, content: content, size: size)
            } else {
                session.queued.append(detailAction)
            }
            if detailAction == .toggleWrap {  // a preference: the next flows open the same way
                detailWraps = session.queued.isEmpty ? session.state.wraps : !detailWraps
            }
            screen = .detail(session)
        default:
            break
        }
    }

    func renderDetail(_ session: DetailSession) -> ScreenGrid {
        guard let content = session.content else {
            var grid = ScreenGrid(width: size.width, height: size.height)
            grid.fill(row: 0, style: CellStyle(reverse: true))
            grid.put("flow #\(session.id)", row: 0, column: 0, style: CellStyle(reverse: true))
            grid.put("loading…", row: 2, column: 2, style: CellStyle(dim: true))
            return grid
        }
        return FlowDetailRenderer.render(session.state, content: content, size: size, message: message)
    }
}
