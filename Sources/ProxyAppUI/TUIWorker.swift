import CaptureStore
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI

/// What background work reports back to the controller.
enum TUIEvent: Sendable {
    case message(StatusMessage)
    /// The breakpoint filter and the held exchanges; nil when the proxy could not be asked.
    case breakpoints(TUIBreakpoints.State?)
    /// A request rendered for the editor (`R`).
    case editReady(EditSession)
    case pins([PinnedDomain])
    /// The pins could not be read: the view `p` asked for will not open.
    case pinsFailed
    /// A search found flow `id` (the controller looks up its position).
    case searchFound(id: Int64, generation: Int)
    /// A search jump finished, found or not (keys typed meanwhile go on).
    case searchDone
    case detail(id: Int64, content: FlowDetailContent)
    /// A WebSocket open in the detail view, read again: its flow and the messages after those shown.
    case webSocketUpdate(id: Int64, flow: Flow, newMessages: [CapturedMessage])
    /// What `e` will export, counted: `2 marked flows`, `1,234 flows in view`.
    case exportScope(String)
    /// Bytes for the clipboard and what they are (`the curl command of flow #3`).
    case clipboard([UInt8], what: String)
    /// The search's matches among the loaded rows.
    case searchMatches(SearchHighlight)
}

/// Runs the TUI's slow work (store writes, exports, searches, loading a flow) off the UI thread
/// and hands the results back as `TUIEvent`s, which the controller drains on its next tick: a
/// key press never waits for the database or the disk.
///
/// Two serial lanes: `.quick` for what a user waits on (a mark, a delete, opening a flow, the
/// pins) and `.long` for what may take minutes on a big capture (an export, a search, clearing),
/// so a running export never holds up the next mark.
final class TUIWorker: Sendable {
    enum Lane { case quick, long }

    private let quick = DispatchQueue(label: "proxyapp.tui.worker")
    private let long = DispatchQueue(label: "proxyapp.tui.worker.long")
    private let inbox = NIOLockedValueBox<[TUIEvent]>([])
    private let pending = NIOLockedValueBox(0)

    /// Runs `work` in the background; the events it returns are delivered in order. A thrown
    /// error becomes an error message prefixed with `failure`.
    func perform(_ failure: String, lane: Lane = .quick, _ work: @escaping @Sendable () throws -> [TUIEvent]) {
        pending.withLockedValue { $0 += 1 }
        (lane == .quick ? quick : long).async { [inbox, pending] in
            let events: [TUIEvent]
            do {
                events = try work()
            } catch {
                events = [.message(StatusMessage(.error, "\(failure): \(CaptureErrorText.describe(error))"))]
            }
            inbox.withLockedValue { $0 += events }
            pending.withLockedValue { $0 -= 1 }
        }
    }

    /// Posts an event from within background work that produces several over time.
    func post(_ event: TUIEvent) {
        inbox.withLockedValue { $0.append(event) }
    }

    /// The events delivered since the last call.
    func drain() -> [TUIEvent] {
        inbox.withLockedValue { events in
            defer { events.removeAll() }
            return events
        }
    }

    /// True while some work has not finished.
    var isBusy: Bool { pending.withLockedValue { $0 > 0 } }

    /// Blocks until the work queued so far has run (quitting with an export running; tests).
    func waitUntilIdle() {
        quick.sync {}
        long.sync {}
        quick.sync {}
    }
}
