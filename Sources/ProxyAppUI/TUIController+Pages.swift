import TerminalUI

/// The read-only text screens: `i` (how to use the proxy, from `TUIContext.info`, drawn fresh
/// each frame so the rules are current) and `E` (the log file's tail from `EventLogFeed`,
/// following new lines while at the end). Scroll keys scroll; any other key goes back to the list.
/// `Q` (a QR code of the CA page per network address) lives here too.
extension TUIController {
    func showEventLog() {
        eventLog.refresh(force: true)
        screen = .page(.eventLog, TextPageState(atEnd: true))
    }

    func handlePage(_ kind: TextPageKind, _ state: TextPageState, _ key: Key) {
        guard let move = TextPageState.move(for: key) else {
            screen = .list
            return
        }
        var state = state
        state.apply(move, lineCount: pageLines(kind).count, rows: TextPageRenderer.rows(screenHeight: size.height))
        screen = .page(kind, state)
    }

    func renderPage(_ kind: TextPageKind, _ state: TextPageState) -> ScreenGrid {
        switch kind {
        case .info:
            TextPageRenderer.render(title: "ProxyApp  info", lines: pageLines(kind), state: state,
                                    hint: "j/k scroll  any other key closes", size: size, message: message)
        case .eventLog:
            TextPageRenderer.render(title: EventLogPage.title(path: eventLog.path), lines: pageLines(kind), state: state,
                                    hint: EventLogPage.hint, size: size, message: message)
        }
    }

    /// `Q`: ←/→ go through the addresses (round), any other key goes back to the list.
    func handleQRCode(_ index: Int, _ key: Key) {
        let count = max(1, context.info().scanTargets.count)
        switch key {
        case .left, .character("h"): screen = .qrCode(index: (index + count - 1) % count)
        case .right, .character("l"): screen = .qrCode(index: (index + 1) % count)
        default: screen = .list
        }
    }

    func renderQRCode(_ index: Int) -> ScreenGrid {
        QRCodePage.render(targets: context.info().scanTargets, index: index, size: size, message: message)
    }

    private func pageLines(_ kind: TextPageKind) -> [String] {
        switch kind {
        case .info: InfoPage.lines(context.info())
        case .eventLog:
            EventLogPage.lines(eventLog.content, path: eventLog.path, proxyElsewhere: context.info().proxy != .thisProcess)
        }
    }
}
