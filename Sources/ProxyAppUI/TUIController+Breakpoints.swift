import FlowFilter
import Foundation
import ProxyModel
import TerminalUI

/// What the flow list knows of breakpoints: the filter in force and the exchanges held now,
/// asked for on a worker lane about four times a second (`TUIContext.breakpoints`: this process's
/// proxy, or the control channel of the one a `proxyapp tui` is attached to).
final class BreakpointView {
    var state: TUIBreakpoints.State?
    /// The held exchange `a`, `x` act on (an index into `state.held`).
    var selection = 0
    var pollPending = false
    var polledAt = Date.distantPast

    static let pollInterval: TimeInterval = 0.25
}

/// Breakpoints in the TUI: `b` sets the filter (the filter language: `~q` requests, `~s`
/// responses; empty clears it), held exchanges are listed above the flows, Tab picks one, `a`
/// accepts it, `A` accepts all, `x` kills it.
extension TUIController {
    func pollBreakpoints() {
        guard let breakpoints = context.breakpoints, !breakpointView.pollPending,
              Date().timeIntervalSince(breakpointView.polledAt) >= BreakpointView.pollInterval else { return }
        breakpointView.pollPending = true
        breakpointView.polledAt = Date()
        worker.perform("cannot read the breakpoints") { [.breakpoints(breakpoints.state())] }
    }

    func breakpointsArrived(_ state: TUIBreakpoints.State?) {
        breakpointView.pollPending = false
        let before = heldPanel?.rows ?? 0
        breakpointView.state = state
        let count = state?.held.count ?? 0
        breakpointView.selection = min(breakpointView.selection, max(0, count - 1))
        if heldPanel?.rows ?? 0 != before { fitListToScreen() }
    }

    /// The list's height once held exchanges take their rows.
    func fitListToScreen() {
        list.resize(visibleRows: FlowListRenderer.listRows(screenHeight: size.height, heldRows: heldPanel?.rows ?? 0))
    }

    var heldPanel: HeldPanel? {
        guard let held = breakpointView.state?.held, !held.isEmpty else { return nil }
        let lines = held.map { item in
            let side = item.side == "request" ? "request " : "response"
            let status = item.status.map { " \($0)" } ?? ""
            return TerminalText.escaped("#\(item.id) \(side)\(status)  \(item.method) \(item.url)  \(Int(item.seconds))s")
        }
        return HeldPanel(lines: lines, selected: breakpointView.selection)
    }

    func editInterceptFilter() {
        guard context.breakpoints != nil else {
            message = StatusMessage(.error, "breakpoints need a running proxy: start one on this data directory (proxyapp run)")
            return
        }
        overlay = .prompt(.intercept, LineEditor(breakpointView.state?.filter ?? ""), error: nil)
    }

    /// The `b` prompt's text: checked here (the error's column, as for `/`), set off this thread.
    func submitIntercept(_ text: String, editor: LineEditor) -> FilterSyntaxError? {
        guard let breakpoints = context.breakpoints else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty {
            do { _ = try FlowFilter(parsing: text) } catch { return error }
        }
        worker.perform("cannot set the breakpoints") {
            if let problem = breakpoints.setFilter(trimmed.isEmpty ? nil : text) { return [.message(StatusMessage(.error, problem))] }
            let said = trimmed.isEmpty ? "breakpoints off: nothing new is held" : "intercepting \(text)"
            return [.message(StatusMessage(.info, said)), .breakpoints(breakpoints.state())]
        }
        breakpointView.pollPending = true
        return nil
    }

    func decideHeld(accept: Bool) {
        guard let breakpoints = context.breakpoints, let held = breakpointView.state?.held, !held.isEmpty else {
            message = StatusMessage(.info, "nothing is held at a breakpoint" + (context.breakpoints == nil ? "" : " (b sets one)"))
            return
        }
        let item = held[min(breakpointView.selection, held.count - 1)]
        worker.perform("cannot decide for the held exchange") {
            let done = breakpoints.decide(item.id, accept)
            let text = done ? "\(accept ? "accepted" : "killed") #\(item.id) \(item.method) \(item.url)"
                : "#\(item.id) is no longer held"
            return [.message(StatusMessage(.info, TerminalText.escaped(text))), .breakpoints(breakpoints.state())]
        }
        breakpointView.pollPending = true
    }

    func acceptAllHeld() {
        guard let breakpoints = context.breakpoints else {
            message = StatusMessage(.info, "nothing is held at a breakpoint")
            return
        }
        worker.perform("cannot accept the held exchanges") {
            let count = breakpoints.acceptAll()
            return [.message(StatusMessage(.info, "accepted \(count) held exchange\(count == 1 ? "" : "s")")),
                    .breakpoints(breakpoints.state())]
        }
        breakpointView.pollPending = true
    }

    func selectNextHeld() {
        let count = breakpointView.state?.held.count ?? 0
        guard count > 0 else {
            message = StatusMessage(.info, "nothing is held at a breakpoint")
            return
        }
        breakpointView.selection = (breakpointView.selection + 1) % count
    }
}
