import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import TerminalUI

/// The TUI's model: which screen is up, the flow list's window over the feed, prompts and
/// confirmations, and the status message. Keys go in (`handle`), frames come out (`render`).
///
/// It runs on one thread (the terminal loop's, or a test's) and never touches the database:
/// reads come from `FlowListFeed` snapshots, everything else goes through `TUIWorker`, and
/// `tick()` folds in whatever they finished since the last frame. So a test can drive it with
/// keys against a real capture and read the screen back, as the benchmark does too.
public final class TUIController {
    /// The full-screen view that is up.
    enum Screen {
        case list
        case detail(DetailSession)
        case help(lines: [String], scroll: Int, returnTo: ReturnScreen)
        case pins(PinsViewState)
        /// The `i` info screen or the `E` event log.
        case page(TextPageKind, TextPageState)
    }

    /// The read-only text screens.
    enum TextPageKind { case info, eventLog }

    /// Where the help screen goes back to.
    enum ReturnScreen {
        case list
        case detail(DetailSession)
    }

    /// The flow open in the detail view, and its content once loaded.
    struct DetailSession {
        var id: Int64
        var state: FlowDetailState
        var content: FlowDetailContent?
    }

    /// A question in the status line.
    enum Overlay {
        case prompt(PromptKind, LineEditor, error: String?)
        case confirm(ConfirmKind)
    }

    enum PromptKind: Equatable {
        case filter, search, exportHAR
        case curl(id: Int64)

        var label: String {
            switch self {
            case .filter: "filter:"
            case .search: "search:"
            case .exportHAR: "export HAR to:"
            case .curl: "save curl command to:"
            }
        }
    }

    enum ConfirmKind: Equatable {
        case clearAll(count: Int)
        case quit
    }

    let repository: TrafficRepository
    let feed: FlowListFeed
    let context: TUIContext
    let worker = TUIWorker()
    /// The log file's tail for the `E` screen, read off this thread while the screen is up.
    private(set) lazy var eventLog = EventLogFeed(path: context.info().logPath)

    var screen: Screen = .list
    var overlay: Overlay?
    var list = FlowListState()
    /// Zero until the first `resize`, so that one always sizes the list.
    var size = ScreenSize(width: 0, height: 0)
    var message: StatusMessage?
    var filter: FlowFilter?
    var search: FlowFilter?
    /// True after `p` until the pins view opens: a pins result opens it only then.
    var pinsRequested = false
    /// Marks sent to the store whose rows are not reloaded yet, by flow id: a quick second `m`
    /// must undo the first, not repeat it.
    var pendingMarks: [Int64: Bool] = [:]
    /// True once the user asked to quit (and confirmed, where asked).
    public internal(set) var wantsQuit = false

    private var seenGeneration = -1
    /// The `prepended` count of the snapshot the list's positions follow.
    private(set) var seenPrepended = 0
    private var lastRequest: (range: Range<Int>, generation: Int, prepended: Int, version: Int)?
    private(set) var snapshot = FlowListFeed.Snapshot()
    var snapshotGeneration: Int { snapshot.generation }

    public init(repository: TrafficRepository, feed: FlowListFeed, context: TUIContext) {
        self.repository = repository
        self.feed = feed
        self.context = context
    }

    /// The terminal's size; the list keeps its selection in view.
    public func resize(_ newSize: ScreenSize) {
        guard newSize != size else { return }
        size = newSize
        list.resize(visibleRows: FlowListRenderer.listRows(screenHeight: newSize.height))
    }

    /// Folds in the feed's newest snapshot and the worker's finished work, and asks the feed for
    /// the rows the list shows (plus a page either side) when they are not loaded.
    public func tick() {
        snapshot = feed.latest()
        if snapshot.generation != seenGeneration {
            seenGeneration = snapshot.generation
            seenPrepended = snapshot.prepended  // already counted in totalRows
            lastRequest = nil
            list = FlowListState(totalRows: snapshot.totalRows, visibleRows: list.visibleRows,
                                 filterText: filter?.text ?? "")
        } else {
            if snapshot.prepended > seenPrepended {
                list.rowsPrepended(snapshot.prepended - seenPrepended)
                seenPrepended = snapshot.prepended
            }
            if snapshot.totalRows != list.totalRows { list.rowsAppended(newTotal: snapshot.totalRows) }
        }
        for event in worker.drain() { apply(event) }
        if case .page(.eventLog, _) = screen { eventLog.refresh() }
        if snapshot.error != nil { lastRequest = nil }  // a failed read: ask again next turn
        var stale = false
        if let window = snapshot.window, window.generation == seenGeneration {
            list.load(window.rows, at: window.offset + snapshot.prepended - window.prepended)
            stale = window.contentVersion != snapshot.contentVersion
            if !stale, !pendingMarks.isEmpty {
                for row in window.rows where row.id.flatMap({ pendingMarks[$0] }) == row.marked {
                    pendingMarks[row.id!] = nil
                }
            }
        }
        let needed = list.neededRange
        guard list.needsLoading || stale, !needed.isEmpty else { return }
        let page = max(1, list.visibleRows)
        let wanted = max(0, needed.lowerBound - page)..<(needed.upperBound + page)
        if let last = lastRequest, last.generation == seenGeneration, last.prepended == snapshot.prepended,
           last.version == snapshot.contentVersion, last.range.contains(needed.lowerBound),
           last.range.upperBound >= needed.upperBound {
            return  // already asked; the answer is on its way
        }
        // The feed clamps to the rows it has: remember what can come back, so rows that arrive
        // later are asked for again.
        lastRequest = (wanted.clamped(to: 0..<list.totalRows), seenGeneration, snapshot.prepended, snapshot.contentVersion)
        feed.request(wanted, prepended: snapshot.prepended)
    }

    /// True when every row the list shows is loaded and current (benchmarks wait for this).
    public var isListSettled: Bool {
        guard case .list = screen else { return true }
        guard snapshot.generation == seenGeneration, !list.needsLoading else { return false }
        guard let window = snapshot.window else { return list.totalRows == 0 }
        return window.contentVersion == snapshot.contentVersion
    }

    /// How many rows the list has now, and whether a filtered view is still scanning.
    public var listProgress: (rows: Int, scanning: Bool) {
        (list.totalRows, snapshot.scanning)
    }

    /// True while an export, a search or a store change is still running in the background.
    public var hasPendingWork: Bool { worker.isBusy }

    /// Waits for background work (an export being written) to finish: called after quitting,
    /// so a quit never leaves half a file behind.
    public func finishPendingWork() {
        worker.waitUntilIdle()
    }

    public func render() -> ScreenGrid {
        var grid: ScreenGrid
        switch screen {
        case .list:
            let welcome = list.totalRows == 0 && filter == nil && !snapshot.scanning ? InfoPage.welcome(context.info()) : []
            grid = FlowListRenderer.render(list, header: header, size: size, message: feedError ?? message ?? scanMessage,
                                           welcome: welcome)
        case .detail(let session):
            grid = renderDetail(session)
        case .help(let lines, let scroll, _):
            grid = HelpRenderer.render(lines: lines, scroll: scroll, size: size)
        case .pins(let pins):
            grid = PinsRenderer.render(pins, ttl: context.pinTTL, timeZone: context.timeZone, size: size, message: message)
        case .page(let kind, let state):
            grid = renderPage(kind, state)
        }
        switch overlay {
        case .prompt(let kind, let editor, let error)?:
            PromptRenderer.draw(label: kind.label, editor: editor, error: error, into: &grid)
        case .confirm(let kind)?:
            ConfirmRenderer.draw(question: question(kind), into: &grid)
        case nil:
            break
        }
        return grid
    }

    private var header: HeaderInfo {
        HeaderInfo(listenAddress: context.listenAddress, caURL: context.caURL, flowCount: list.totalRows,
                   filter: filter?.text ?? "", rules: context.rules())
    }

    /// A read error of the feed: shown before anything else.
    private var feedError: StatusMessage? {
        snapshot.error.map { StatusMessage(.error, $0) }
    }

    /// What the feed is doing when nothing else is being said.
    private var scanMessage: StatusMessage? {
        if snapshot.scanning { return StatusMessage(.info, filter == nil ? "reading older flows…" : "filtering older flows…") }
        return nil
    }

    private func question(_ kind: ConfirmKind) -> String {
        switch kind {
        case .clearAll(let count):
            filter == nil && !snapshot.scanning ? "Delete all \(count) flows from the capture?"
                : "Delete EVERY flow in the capture, not only the \(count) shown?"
        case .quit: "Quit? This stops the proxy."
        }
    }

    func apply(_ event: TUIEvent) {
        switch event {
        case .message(let text):
            message = text
        case .pins(let pins):
            if case .pins(var state) = screen {
                state.replace(pins)
                screen = .pins(state)
            } else if pinsRequested, case .list = screen {
                screen = .pins(PinsViewState(pins: pins))
            }
            pinsRequested = false
        case .searchFound(let id, let generation):
            guard generation == snapshot.generation, let position = feed.position(of: id, prepended: seenPrepended) else { return }
            list.select(position)
        case .detail(let id, let content):
            if case .detail(var session) = screen, session.id == id {
                session.content = content
                screen = .detail(session)
            }
        }
    }
}
