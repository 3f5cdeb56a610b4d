import CaptureStore
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI

/// Reads the capture for the TUI's flow list on a queue of its own, so the input and render
/// loop never waits on the database (issue 5).
///
/// It keeps the position → id map of every flow (`flowIDs(after:)`, 8 bytes a flow), extends it
/// every `pollInterval` with the flows stored since (the capture may be written by another
/// process), and loads the window of rows the UI asks for (`listedFlows(ids:)`, no bodies). The
/// UI reads the newest results with `latest()`, a short lock, never a query.
final class FlowListFeed: Sendable {
    /// What the feed knows at one moment.
    struct Snapshot: Sendable, Equatable {
        var totalRows = 0
        /// The last window loaded: the first row's position and the rows.
        var window: (offset: Int, rows: [FlowRow])?
        /// The last read failure, in one line (the UI shows it in its status line).
        var error: String?

        static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
            lhs.totalRows == rhs.totalRows && lhs.window?.offset == rhs.window?.offset
                && lhs.window?.rows == rhs.window?.rows && lhs.error == rhs.error
        }
    }

    private struct State {
        var ids: [Int64] = []
        var snapshot = Snapshot()
        var requested: Range<Int>?
        var running = false
    }

    private let repository: TrafficRepository
    private let timeZone: TimeZone
    private let pollInterval: TimeInterval
    private let queue = DispatchQueue(label: "proxyapp.tui.feed")
    private let state = NIOLockedValueBox(State())

    init(repository: TrafficRepository, timeZone: TimeZone = .current, pollInterval: TimeInterval = 0.25) {
        self.repository = repository
        self.timeZone = timeZone
        self.pollInterval = pollInterval
    }

    /// Starts polling: the first read happens at once, then every `pollInterval`.
    func start() {
        state.withLockedValue { $0.running = true }
        queue.async { [weak self] in self?.pollAndReschedule() }
    }

    /// Stops polling after the read in progress, if any.
    func stop() {
        state.withLockedValue { $0.running = false }
    }

    private func pollAndReschedule() {
        guard state.withLockedValue({ $0.running }) else { return }
        poll()
        queue.asyncAfter(deadline: .now() + pollInterval) { [weak self] in self?.pollAndReschedule() }
    }

    /// Asks for the rows at `range` (positions in id order); served on the feed's queue.
    func request(_ range: Range<Int>) {
        state.withLockedValue { $0.requested = range }
        queue.async { [weak self] in self?.loadRequested() }
    }

    /// The newest results, without touching the database.
    func latest() -> Snapshot {
        state.withLockedValue { $0.snapshot }
    }

    private func poll() {
        let last = state.withLockedValue { $0.ids.last } ?? 0
        do {
            let added = try repository.flowIDs(after: last)
            guard !added.isEmpty else { return }
            state.withLockedValue { state in
                state.ids += added
                state.snapshot.totalRows = state.ids.count
                state.snapshot.error = nil
            }
        } catch {
            state.withLockedValue { $0.snapshot.error = "cannot read the capture: \(error)" }
        }
    }

    private func loadRequested() {
        let (range, ids) = state.withLockedValue { state -> (Range<Int>?, [Int64]) in
            guard let range = state.requested else { return (nil, []) }
            let clamped = range.clamped(to: 0..<state.ids.count)
            return (clamped, Array(state.ids[clamped]))
        }
        guard let range else { return }
        do {
            let rows = try repository.listedFlows(ids: ids).map { FlowRow($0, timeZone: timeZone) }
            state.withLockedValue { $0.snapshot.window = (range.lowerBound, rows) }
        } catch {
            state.withLockedValue { $0.snapshot.error = "cannot read the capture: \(error)" }
        }
    }
}
