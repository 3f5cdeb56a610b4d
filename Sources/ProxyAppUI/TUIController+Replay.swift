import CaptureStore
import Foundation
import TerminalUI

/// `r`: the selected flow — or, on the list with flows marked in view, every marked flow in
/// order — sent again through the proxy (`TUIContext.replay`). The replays arrive in the list as
/// new flows marked `↻`; the status line says what came back.
extension TUIController {
    /// More marked flows than one `r` sends.
    static let maximumReplayedFlows = 1_000

    func replaySelection() {
        guard let replay = context.replay else {
            message = StatusMessage(.error, "no proxy to send through: start one on this data directory (proxyapp run), "
                                    + "or use proxyapp replay ID")
            return
        }
        guard let selected = selectedID else {
            message = StatusMessage(.info, "nothing to replay: the view is empty")
            return
        }
        let onList: Bool
        if case .detail = screen { onList = false } else { onList = true }
        let repository = repository
        let filter = filter
        message = StatusMessage(.info, "replaying…")
        worker.perform("the replay failed", lane: .long) {
            var ids = [selected]
            if onList, let last = try? repository.lastFlowID(), last > 0 {
                let marked = try repository.matchingFlowIDs(in: 1...last, query: FlowQuery(filter: filter, markedOnly: true))
                if !marked.isEmpty { ids = marked }
            }
            guard ids.count <= Self.maximumReplayedFlows else {
                return [.message(StatusMessage(.error, "\(ids.count) flows are marked: at most "
                                               + "\(Self.maximumReplayedFlows) are replayed at once (proxyapp replay sends more)"))]
            }
            let result = replay(ids)
            return [.message(StatusMessage(result.ok ? .info : .error, result.message))]
        }
    }
}
