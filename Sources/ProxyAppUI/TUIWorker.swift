import CaptureExport
import CaptureStore
import Dispatch
import FlowExport
import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI

/// What background work reports back to the controller.
enum TUIEvent: Sendable {
    case message(StatusMessage)
    case pins([PinnedDomain])
    /// A search found flow `id` (the controller looks up its position).
    case searchFound(id: Int64, generation: Int)
    case detail(id: Int64, content: FlowDetailContent)
}

/// Runs the TUI's slow work (store writes, exports, searches, loading a flow) on a queue of its
/// own and hands the results back as `TUIEvent`s, which the controller drains on its next tick:
/// a key press never waits for the database or the disk.
final class TUIWorker: Sendable {
    private let queue = DispatchQueue(label: "proxyapp.tui.worker")
    private let inbox = NIOLockedValueBox<[TUIEvent]>([])

    /// Runs `work` in the background; the events it returns are delivered in order. A thrown
    /// error becomes an error message prefixed with `failure`.
    func perform(_ failure: String, _ work: @escaping @Sendable () throws -> [TUIEvent]) {
        queue.async { [inbox] in
            let events: [TUIEvent]
            do {
                events = try work()
            } catch {
                events = [.message(StatusMessage(.error, "\(failure): \(error)"))]
            }
            inbox.withLockedValue { $0 += events }
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

    /// Blocks until the work queued so far has run (tests, and quitting after an export).
    func waitUntilIdle() {
        queue.sync {}
    }
}
