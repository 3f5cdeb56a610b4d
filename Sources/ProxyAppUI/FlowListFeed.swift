import CaptureStore
import Dispatch
import FlowFilter
import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI

/// Reads the capture for the TUI's flow list on a queue of its own, so the input and render
/// loop never waits on the database.
///
/// It keeps the position → id map of the flows in view (8 bytes a flow: 8 MB for a million),
/// extends it every `pollInterval` with the flows stored since (the capture may be written by
/// another process), and loads the window of rows the UI asks for (`listedFlows(ids:)`, no
/// bodies). The UI reads the newest results with `latest()`, a short lock, never a query.
///
/// The ids come from `FlowIDScan`: the newest slice of the id space first, then older slices one
/// queue item at a time, so the tail the user sees is ready at once, window requests are served
/// between slices, and a new filter stops the old scan. Rows found by the backward scan are
/// *prepended*: `Snapshot.prepended` counts them so the UI can keep its selection on the same flow.
public final class FlowListFeed: Sendable {
    /// What the feed knows at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Bumped by every `setQuery` and `reset`: positions of another generation mean nothing.
        public var generation = 0
        public var totalRows = 0
        /// Rows inserted at the front in this generation so far (a filtered view's older part).
        public var prepended = 0
        /// True while the view is still reading (or filtering) older flows.
        public var scanning = true
        /// Bumped when rows already loaded changed (a mark, a delete): reload the window.
        public var contentVersion = 0
        /// The last window loaded: the first row's position, the rows, and `prepended` when it
        /// was loaded (positions shift by the difference).
        public var window: Window?
        /// The last read failure, in one line (the UI shows it in its status line).
        public var error: String?
    }

    /// A loaded window of rows.
    public struct Window: Sendable, Equatable {
        public var generation: Int
        public var offset: Int
        public var prepended: Int
        public var contentVersion: Int
        public var rows: [FlowRow]
        /// The flow ids of `rows`, in order.
        public var ids: [Int64]
    }

    private struct State {
        var ids: [Int64] = []
        var scan: FlowIDScan
        var snapshot = Snapshot()
        /// The window asked for: positions, the `prepended` they refer to, and the generation.
        var requested: (range: Range<Int>, prepended: Int, generation: Int)?
        var running = false
    }

    private let repository: any FlowStore
    private let timeZone: TimeZone
    private let pollInterval: TimeInterval
    private let queue = DispatchQueue(label: "proxyapp.tui.feed")
    private let state: NIOLockedValueBox<State>

    private let firstSliceSize: Int64
    /// `pollNow` tickets: the last handed out, the last whose poll finished.
    private let pollTickets = NIOLockedValueBox((issued: 0, served: 0))

    /// `firstSliceSize`: how many ids the first slice of a view covers (later slices adapt to
    /// about 30 ms each); small, so the first screen of a filtered view comes at once.
    public init(repository: any FlowStore, timeZone: TimeZone = .current, pollInterval: TimeInterval = 0.25,
                firstSliceSize: Int64 = 5_000) {
        self.firstSliceSize = firstSliceSize
        self.repository = repository
        state = NIOLockedValueBox(State(scan: FlowIDScan(query: nil, sliceSize: firstSliceSize)))
        self.timeZone = timeZone
        self.pollInterval = pollInterval
    }

    /// Starts polling: the first read happens at once, then every `pollInterval`.
    public func start() {
        let generation = state.withLockedValue { state in
            state.running = true
            return state.snapshot.generation
        }
        queue.async { [weak self] in
            self?.pollAndReschedule()
            self?.scheduleOlderSlice(generation: generation)
        }
    }

    /// Stops polling after the read in progress, if any.
    public func stop() {
        state.withLockedValue { $0.running = false }
    }

    /// Reads the flows stored since the last poll now, not at the next poll (`G`: the newest
    /// flow in the capture, also one stored a moment ago). Returns a ticket that
    /// `pollsServed` reaches once that read is done.
    public func pollNow() -> Int {
        let ticket = pollTickets.withLockedValue { tickets in
            tickets.issued += 1
            return tickets.issued
        }
        queue.async { [weak self] in
            self?.poll()
            self?.pollTickets.withLockedValue { $0.served = max($0.served, ticket) }
        }
        return ticket
    }

    /// The last `pollNow` ticket whose read is done (its flows are in `latest()`).
    public var pollsServed: Int { pollTickets.withLockedValue { $0.served } }

    /// Shows only the flows matching `query` (nil: all); starts a new generation at once.
    public func setQuery(_ query: FlowQuery?) {
        state.withLockedValue { state in
            // A filter checked in Swift reads each row (~15 µs a flow): its first slice is
            // smaller so the first screen of matches comes sooner; later slices adapt anyway.
            let first = query?.isAnsweredBySQL == false ? max(firstSliceSize / 4, FlowIDScan.sliceBounds.lowerBound)
                : firstSliceSize
            state.scan = FlowIDScan(query: query, sliceSize: first)
            state.ids = []
            state.requested = nil
            let generation = state.snapshot.generation + 1
            state.snapshot = Snapshot(generation: generation)
        }
        let generation = state.withLockedValue { $0.snapshot.generation }
        queue.async { [weak self] in
            self?.poll()
            self?.scheduleOlderSlice(generation: generation)
        }
    }

    /// Forgets every id and reads again (after the capture was cleared).
    public func reset() {
        setQuery(state.withLockedValue { $0.scan.query })
    }

    /// Asks for the rows at `range`, positions as they were when `prepended` rows had been
    /// prepended (the snapshot the caller looked at; older rows may arrive before the request is
    /// served, and the positions are moved by as many). Served on the feed's queue.
    public func request(_ range: Range<Int>, prepended: Int? = nil) {
        state.withLockedValue { state in
            state.requested = (range, prepended ?? state.snapshot.prepended, state.snapshot.generation)
        }
        queue.async { [weak self] in self?.loadRequested() }
    }

    /// The flows with `ids` were deleted: drop them from the view and reload the window.
    public func remove(ids: Set<Int64>) {
        state.withLockedValue { state in
            state.ids.removeAll { ids.contains($0) }
            state.snapshot.totalRows = state.ids.count
            state.snapshot.contentVersion += 1
        }
    }

    /// Rows already loaded changed in the store (a mark): reload the window.
    public func invalidateRows() {
        state.withLockedValue { $0.snapshot.contentVersion += 1 }
    }

    /// The newest results, without touching the database.
    public func latest() -> Snapshot {
        state.withLockedValue { $0.snapshot }
    }

    /// The ids of the view at `positions` (clamped), for actions on rows: mark, delete, search.
    /// `prepended`: the count the positions refer to (default: now), as for `request`.
    public func ids(at positions: Range<Int>, prepended: Int? = nil) -> [Int64] {
        state.withLockedValue { state in
            let shift = state.snapshot.prepended - (prepended ?? state.snapshot.prepended)
            let shifted = (positions.lowerBound + shift)..<(positions.upperBound + shift)
            return Array(state.ids[shifted.clamped(to: 0..<state.ids.count)])
        }
    }

    /// The position of flow `id` in the view (counted as when `prepended` rows had been
    /// prepended; default: now), if it is there.
    public func position(of id: Int64, prepended: Int? = nil) -> Int? {
        state.withLockedValue { state in
            var low = 0
            var high = state.ids.count
            while low < high {
                let middle = (low + high) / 2
                if state.ids[middle] < id { low = middle + 1 } else { high = middle }
            }
            guard low < state.ids.count, state.ids[low] == id else { return nil }
            return low - (state.snapshot.prepended - (prepended ?? state.snapshot.prepended))
        }
    }

    private func pollAndReschedule() {
        guard state.withLockedValue({ $0.running }) else { return }
        poll()
        queue.asyncAfter(deadline: .now() + pollInterval) { [weak self] in self?.pollAndReschedule() }
    }

    /// New flows at the tail, then (for a filtered view) the next older slice.
    private func poll() {
        let (scan, generation) = state.withLockedValue { ($0.scan, $0.snapshot.generation) }
        do {
            var updated = scan
            let added = try updated.readNewer(repository)
            state.withLockedValue { state in
                guard state.snapshot.generation == generation else { return }
                state.scan = updated
                if !added.isEmpty {
                    state.ids += added
                    state.snapshot.totalRows = state.ids.count
                }
                state.snapshot.error = nil
            }
        } catch {
            state.withLockedValue { $0.snapshot.error = "cannot read the capture: \(CaptureErrorText.describe(error))" }
        }
    }

    /// One older slice of the view's backward scan, then the next as a new queue item. Before
    /// the first read succeeded, and after a failed read, it tries again a poll interval later.
    private func scheduleOlderSlice(generation: Int, after delay: TimeInterval = 0) {
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            let scan = self.state.withLockedValue { $0.snapshot.generation == generation ? $0.scan : nil }
            guard var scan, !scan.isComplete else {
                self.state.withLockedValue { state in
                    if state.snapshot.generation == generation { state.snapshot.scanning = false }
                }
                return
            }
            guard scan.hasStarted else {
                self.scheduleOlderSlice(generation: generation, after: self.pollInterval)
                return
            }
            do {
                let older = try scan.readOlder(self.repository)
                let stillCurrent = self.state.withLockedValue { state -> Bool in
                    guard state.snapshot.generation == generation else { return false }
                    state.scan = scan
                    if !older.isEmpty {
                        state.ids.insert(contentsOf: older, at: 0)
                        state.snapshot.totalRows = state.ids.count
                        state.snapshot.prepended += older.count
                    }
                    state.snapshot.scanning = !scan.isComplete
                    return true
                }
                if stillCurrent { self.scheduleOlderSlice(generation: generation) }
            } catch {
                self.state.withLockedValue { $0.snapshot.error = "cannot read the capture: \(CaptureErrorText.describe(error))" }
                self.scheduleOlderSlice(generation: generation, after: self.pollInterval)
            }
        }
    }

    private func loadRequested() {
        let request = state.withLockedValue { state -> (Range<Int>, [Int64], Int, Int, Int)? in
            guard let requested = state.requested, requested.generation == state.snapshot.generation else { return nil }
            state.requested = nil
            let shift = state.snapshot.prepended - requested.prepended
            let range = (requested.range.lowerBound + shift)..<(requested.range.upperBound + shift)
            let clamped = range.clamped(to: 0..<state.ids.count)
            return (clamped, Array(state.ids[clamped]), state.snapshot.generation, state.snapshot.prepended,
                    state.snapshot.contentVersion)
        }
        guard let (range, ids, generation, prepended, version) = request else { return }
        do {
            let rows = try repository.listedFlows(ids: ids).map { FlowRow($0, timeZone: timeZone) }
            state.withLockedValue { state in
                guard state.snapshot.generation == generation else { return }
                if rows.count < ids.count {
                    // Flows deleted by another process: drop their ids, so positions and rows
                    // agree again, and have the window asked for anew.
                    let present = Set(rows.compactMap(\.id))
                    let missing = Set(ids).subtracting(present)
                    state.ids.removeAll { missing.contains($0) }
                    state.snapshot.totalRows = state.ids.count
                    state.snapshot.contentVersion += 1
                    return
                }
                state.snapshot.window = Window(generation: generation, offset: range.lowerBound, prepended: prepended,
                                               contentVersion: version, rows: rows, ids: rows.compactMap(\.id))
            }
        } catch {
            state.withLockedValue { $0.snapshot.error = "cannot read the capture: \(CaptureErrorText.describe(error))" }
        }
    }
}
