import CaptureExport
import CaptureStore
import FlowExport
import FlowFilter
import Foundation
import ProxyModel
import TerminalUI

/// Key dispatch: an open prompt or question takes the key first, then the screen that is up.
extension TUIController {
    public func handle(_ key: Key) {
        // Alt-x is a word motion in a prompt; anywhere else it is what the bytes were before
        // Alt existed: Escape, then x (a quick `Esc q`), so no key is lost.
        if let unaltered = key.unaltered, !promptTakes(key) {
            handle(.escape)
            handle(unaltered)
            return
        }
        if let overlay {
            handleOverlay(overlay, key)
            return
        }
        if isAwaitingAnswer, case .list = screen, key != .control("c") {
            keysAwaiting.append(key)
            return
        }
        message = nil
        switch screen {
        case .list: handleList(key)
        case .detail(let session): handleDetail(session, key)
        case .help(let lines, let scroll, let returnTo): handleHelp(lines, scroll, returnTo, key)
        case .pins(let pins): handlePins(pins, key)
        case .page(let kind, let state): handlePage(kind, state, key)
        case .qrCode(let index): handleQRCode(index, key)
        }
    }

    private func handleList(_ key: Key) {
        if case .mouseClick(let row, _) = key {
            // Rows 0 and 1 are the header and the column titles.
            if row >= 2, row - 2 < list.totalRows - list.top { list.select(list.top + row - 2) }
            return
        }
        if key == .control("c") { return requestQuit() }
        guard let action = KeyBindings.standard.action(for: key) else { return sayUnknown(key) }
        perform(action)
    }

    /// A key no binding has: said on the status line, so a typo is never silently lost.
    func sayUnknown(_ key: Key) {
        switch key {
        case .mouseClick, .mouseWheelUp, .mouseWheelDown, .escape: return  // the mouse, a reflex: no typo
        default: message = StatusMessage(.info, "\(key.name): no such key — ? for help")
        }
    }

    /// True when a prompt is open and `key` edits it.
    private func promptTakes(_ key: Key) -> Bool {
        guard case .prompt(_, var editor, _)? = overlay else { return false }
        return editor.handle(key) != .ignored
    }

    /// Actions shared by the list and the detail view act on `selectedID`.
    func perform(_ action: UIAction) {
        switch action {
        case .list(let movement):
            list.apply(movement)
            if movement == .end || movement == .follow, case .list = screen { awaitedPoll = feed.pollNow() }
        case .quit: requestQuit()
        case .help: showHelp()
        case .editFilter: overlay = .prompt(.filter, LineEditor(filter?.text ?? ""), error: nil)
        case .editSearch: overlay = .prompt(.search, LineEditor(search?.text ?? ""), error: nil)
        case .searchNext: searchAgain(forward: true)
        case .searchPrevious: searchAgain(forward: false)
        case .toggleMark: toggleMark()
        case .deleteFlow: deleteSelected()
        case .clearAll:
            guard refuseIfReadOnly("clear") else { return }
            guard list.totalRows > 0 || snapshot.scanning else {
                message = StatusMessage(.info, "the view is empty: nothing to delete")
                return
            }
            overlay = .confirm(.clearAll(count: list.totalRows))
        case .exportHAR:
            overlay = .prompt(.exportHAR(scope: nil), LineEditor(Self.defaultHARName(now: Date(), timeZone: context.timeZone)),
                              error: nil)
            countExportScope()
        case .replay: replaySelection()
        case .editIntercept: editInterceptFilter()
        case .editResend: editAndResend()
        case .nextHeld: selectNextHeld()
        case .acceptHeld: decideHeld(accept: true)
        case .acceptAllHeld: acceptAllHeld()
        case .killHeld: decideHeld(accept: false)
        case .saveCurl:
            guard let id = selectedID else { return }
            overlay = .prompt(.curl(id: id), LineEditor("flow-\(id).sh"), error: nil)
        case .copy:
            guard let id = selectedID else {
                message = StatusMessage(.info, "nothing to copy: the view is empty")
                return
            }
            overlay = .copyMenu(id: id)
        case .showPins: loadPins()
        case .showInfo: screen = .page(.info, TextPageState())
        case .showQRCode: screen = .qrCode(index: 0)
        case .showEventLog: showEventLog()
        case .openDetail: openDetail()
        default: performDetailAction(action)
        }
    }

    /// The flow the list (or the open detail view) is on.
    var selectedID: Int64? {
        if case .detail(let session) = screen { return session.id }
        guard let index = list.selectedIndex else { return nil }
        return list.row(at: index)?.id ?? feed.ids(at: index..<(index + 1), prepended: seenPrepended).first
    }

    private func requestQuit() {
        if context.proxyRunning {
            overlay = .confirm(.quit)
        } else {
            wantsQuit = true
        }
    }

    private func showHelp() {
        let returnTo: ReturnScreen
        let lines: [String]
        if case .detail(let session) = screen {
            returnTo = .detail(session)
            lines = HelpRenderer.lines(for: KeyBindings.detail, title: "Flow detail")
        } else {
            returnTo = .list
            lines = HelpRenderer.lines(for: KeyBindings.standard, title: "Flow list")
        }
        screen = .help(lines: lines, scroll: 0, returnTo: returnTo)
    }

    private func handleHelp(_ lines: [String], _ scroll: Int, _ returnTo: ReturnScreen, _ key: Key) {
        let page = max(1, size.height - 2)
        let limit = max(0, lines.count - page)
        switch key {
        case .character("j"), .down, .mouseWheelDown: screen = .help(lines: lines, scroll: min(limit, scroll + 1), returnTo: returnTo)
        case .character("k"), .up, .mouseWheelUp: screen = .help(lines: lines, scroll: max(0, scroll - 1), returnTo: returnTo)
        case .pageDown, .character(" "): screen = .help(lines: lines, scroll: min(limit, scroll + page), returnTo: returnTo)
        case .pageUp: screen = .help(lines: lines, scroll: max(0, scroll - page), returnTo: returnTo)
        default:
            switch returnTo {
            case .list: screen = .list
            case .detail(let session): screen = .detail(session)
            }
        }
    }

    private func handlePins(_ pins: PinsViewState, _ key: Key) {
        var pins = pins
        switch key {
        case .character("j"), .down, .mouseWheelDown: pins.move(by: 1)
        case .character("k"), .up, .mouseWheelUp: pins.move(by: -1)
        case .character("d"), .delete:
            guard let pin = pins.selected, refuseIfReadOnly("remove a pin") else { break }
            let repository = repository
            worker.perform("cannot remove the pin") {
                let removed = try repository.removePin(pin.key)
                let text = removed
                    ? "removed the pin for \(pin.host) (\(pin.clientText)): its next connections are decrypted again"
                    : "\(pin.host) was no longer pinned for \(pin.clientText)"
                return [.pins(try repository.pinnedDomains()), .message(StatusMessage(.info, text))]
            }
        case .character("q"), .escape, .character("p"), .backspace:
            screen = .list
            return
        case .character("?"):
            screen = .help(lines: ["Pinned domains", "", "  j, k     select", "  d        remove the pin",
                                   "  q, Esc   back to the flow list"], scroll: 0, returnTo: .list)
            return
        default: break
        }
        screen = .pins(pins)
    }

    private func loadPins() {
        pinsRequested = true
        message = StatusMessage(.info, "reading the pinned domains…")
        let repository = repository
        worker.perform("cannot read the pinned domains") {
            do {
                return [.pins(try repository.pinnedDomains())]
            } catch {
                let reason = CaptureErrorText.describe(error)
                return [.message(StatusMessage(.error, "cannot read the pinned domains: \(reason)")), .pinsFailed]
            }
        }
    }

    /// The answer came: the keys typed while waiting act now, in order (one may wait again).
    func replayKeysAwaiting() {
        let keys = keysAwaiting
        keysAwaiting = []
        for (index, key) in keys.enumerated() {
            if isAwaitingAnswer {
                keysAwaiting += keys[index...]
                return
            }
            handle(key)
        }
    }

    /// False (with a message saying why) when the capture is read-only.
    func refuseIfReadOnly(_ what: String) -> Bool {
        guard context.readOnly else { return true }
        message = StatusMessage(.error, "cannot \(what): the capture is open read-only (restart `proxyapp tui` without --read-only)")
        return false
    }

    private func toggleMark() {
        guard let id = selectedID, refuseIfReadOnly("mark") else { return }
        let current: Bool
        if let pending = pendingMarks[id] {
            current = pending
        } else if case .detail(let session) = screen, let flow = session.content?.flow {
            current = flow.marked
        } else if let index = list.selectedIndex, let row = list.row(at: index) {
            current = row.marked
        } else {
            current = false
        }
        let marked = !current
        pendingMarks[id] = marked
        let repository = repository
        let feed = feed
        worker.perform("cannot mark flow #\(id)") {
            _ = try repository.setMarked(marked, id: id)
            feed.invalidateRows()
            return [.message(StatusMessage(.info, marked ? "marked flow #\(id)" : "unmarked flow #\(id)"))]
        }
        if case .detail(var session) = screen, session.content != nil {
            session.content?.flow.marked = marked
            screen = .detail(session)
        }
    }

    private func deleteSelected() {
        guard let id = selectedID, refuseIfReadOnly("delete") else { return }
        let repository = repository
        let feed = feed
        worker.perform("cannot delete flow #\(id)") {
            try repository.delete(ids: [id])
            feed.remove(ids: [id])
            return [.message(StatusMessage(.info, "deleted flow #\(id)"))]
        }
        if case .detail = screen { screen = .list }
    }

    /// `proxyapp-2026-11-22-143005.har`.
    static func defaultHARName(now: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "proxyapp-\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))-\(two(parts.hour))\(two(parts.minute))\(two(parts.second)).har"
    }
}
