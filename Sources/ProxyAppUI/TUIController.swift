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
        /// The `Q` screen: the QR code of the CA page of `scanTargets[index]`.
        case qrCode(index: Int)
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
        /// Keys typed before the flow was loaded (`Enter 3`), applied in order once it is.
        var queued: [DetailAction] = []
        /// A WebSocket's live refresh: one read at a time, about once a second.
        var refreshing = false
        var refreshedAt = Date()
    }

    /// A question in the status line.
    enum Overlay {
        case prompt(PromptKind, LineEditor, error: String?)
        case confirm(ConfirmKind)
        /// After `y`: which copy of flow `id` goes to the clipboard.
        case copyMenu(id: Int64)
    }

    enum PromptKind: Equatable {
        case filter, search
        /// `scope` says what will be exported (`2 marked flows`) once counted.
        case exportHAR(scope: String?)
        case curl(id: Int64)
        case intercept

        var label: String {
            switch self {
            case .filter: "filter:"
            case .search: "search:"
            case .exportHAR(let scope): scope.map { "export \($0) to:" } ?? "export HAR to:"
            case .curl: "save curl command to:"
            case .intercept: "intercept (~q requests, ~s responses; empty: off):"
            }
        }
    }

    enum ConfirmKind: Equatable {
        case clearAll(count: Int)
        case quit
    }

    let repository: any FlowStore
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
    /// True while a search jump (`n`, `N`, a new search) is on its way.
    var searchPending = false
    /// The feed's `pollNow` ticket `G` (End, `F`) waits for: the newest flow, stored a moment ago too.
    var awaitedPoll: Int?
    /// True while list keys wait for an answer (`keysAwaiting`).
    var isAwaitingAnswer: Bool { pinsRequested || searchPending || awaitedPoll != nil }
    /// Keys typed while the list waits for an answer they depend on: the pins view after `p`
    /// (`p d` must remove a pin, never delete the flow the list is on), the match after `n`
    /// (`n Enter` opens the match), the newest flows after `G` (`G Enter` opens the flow stored
    /// just now). Replayed in order when the answer comes.
    var keysAwaiting: [Key] = []
    /// Marks sent to the store whose rows are not reloaded yet, by flow id: a quick second `m`
    /// must undo the first, not repeat it.
    var pendingMarks: [Int64: Bool] = [:]
    /// Bytes for the terminal besides the frame (an OSC 52 clipboard sequence): the runner
    /// writes them after the frame (`takeTerminalOutput`).
    var terminalOutput: [UInt8] = []
    /// Whether the detail view wraps long lines: `w` there sets it for the next flows too.
    var detailWraps = true
    /// The breakpoint filter and the held exchanges (`TUIController+Breakpoints`).
    let breakpointView = BreakpointView()
    /// An edit for the runner to open in the editor (`TUIController+Edit`).
    var pendingEdit: EditSession?
    /// The search's matches among the loaded rows (highlighted), and what they were found for.
    var searchHighlight = SearchHighlight()
    /// True once the user asked to quit (and confirmed, where asked).
    public internal(set) var wantsQuit = false

    private var seenGeneration = -1
    /// The `prepended` count of the snapshot the list's positions follow.
    private(set) var seenPrepended = 0
    private var lastRequest: (range: Range<Int>, generation: Int, prepended: Int, version: Int)?
    private(set) var snapshot = FlowListFeed.Snapshot()
    var snapshotGeneration: Int { snapshot.generation }

    public init(repository: any FlowStore, feed: FlowListFeed, context: TUIContext) {
        self.repository = repository
        self.feed = feed
        self.context = context
    }

    /// The terminal's size; the list keeps its selection in view.
    public func resize(_ newSize: ScreenSize) {
        guard newSize != size else { return }
        size = newSize
        fitListToScreen()
    }

    /// Folds in the feed's newest snapshot and the worker's finished work, and asks the feed for
    /// the rows the list shows (plus a page either side) when they are not loaded.
    public func tick() {
        let pollsServed = feed.pollsServed  // before the snapshot: a poll it counts is in the snapshot
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
        if let ticket = awaitedPoll, pollsServed >= ticket {
            awaitedPoll = nil
            list.apply(.end)  // the answer is folded in above: now the last row is the newest flow
            replayKeysAwaiting()
        }
        for event in worker.drain() { apply(event) }
        pollBreakpoints()
        if case .page(.eventLog, _) = screen { eventLog.refresh() }
        refreshOpenWebSocket()
        if snapshot.error != nil { lastRequest = nil }  // a failed read: ask again next turn
        var stale = false
        if let window = snapshot.window, window.generation == seenGeneration {
            list.load(window.rows, at: window.offset + snapshot.prepended - window.prepended)
            highlightSearchMatches(among: window.ids)
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

    /// Bytes to write to the terminal after the frame (a clipboard sequence), once.
    public func takeTerminalOutput() -> [UInt8] {
        defer { terminalOutput = [] }
        return terminalOutput
    }

    /// True when every row the list shows is loaded and current (benchmarks wait for this).
    public var isListSettled: Bool {
        guard case .list = screen else { return true }
        guard !isAwaitingAnswer else { return false }  // keys still wait to act on the list
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
                                           welcome: welcome, highlighted: search == nil ? [] : searchHighlight.matches,
                                           held: heldPanel)
        case .detail(let session):
            grid = renderDetail(session)
        case .help(let lines, let scroll, _):
            grid = HelpRenderer.render(lines: lines, scroll: scroll, size: size)
        case .pins(let pins):
            grid = PinsRenderer.render(pins, ttl: context.pinTTL, timeZone: context.timeZone, size: size, message: message)
        case .page(let kind, let state):
            grid = renderPage(kind, state)
        case .qrCode(let index):
            grid = renderQRCode(index)
        }
        switch overlay {
        case .prompt(let kind, let editor, let error)?:
            PromptRenderer.draw(label: kind.label, editor: editor, error: error, into: &grid)
        case .confirm(let kind)?:
            ConfirmRenderer.draw(question: question(kind), into: &grid)
        case .copyMenu(let id)?:
            ConfirmRenderer.draw(question: "copy flow #\(id):", choices: Self.copyChoices, into: &grid)
        case nil:
            break
        }
        return grid
    }

    private var header: HeaderInfo {
        HeaderInfo(listenAddress: context.listenAddress, caURL: context.caURL, flowCount: list.totalRows,
                   filter: filter?.text ?? "", rules: context.rules(), throttle: context.throttle(),
                   intercept: breakpointView.state?.filter ?? "", held: breakpointView.state?.held.count ?? 0)
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
        case .clearAll(let count) where repository.isShared:
            "Delete EVERY proxy's flows from the shared capture (\(count) shown)?"
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
                message = nil  // "reading the pinned domains…" is done
            }
            pinsRequested = false
            replayKeysAwaiting()
        case .pinsFailed:
            pinsRequested = false
            keysAwaiting = []  // the view they were meant for is not coming: on the list they could delete
        case .searchDone:
            searchPending = false
            replayKeysAwaiting()
        case .searchFound(let id, let generation):
            guard generation == snapshot.generation, let position = feed.position(of: id, prepended: seenPrepended) else { return }
            list.select(position)
        case .detail(let id, let content):
            if case .detail(var session) = screen, session.id == id {
                session.content = content
                // Keys typed while loading wait for the bodies, so `Enter G` reaches their end.
                if content.requestBody != nil, content.responseBody != nil {
                    for action in session.queued { session.state.apply(action, content: content, size: size) }
                    session.queued = []
                }
                screen = .detail(session)
            }
        case .webSocketUpdate(let id, let flow, let newMessages):
            guard case .detail(var session) = screen, session.id == id, var content = session.content else { return }
            session.refreshing = false
            content.flow = flow
            if !newMessages.isEmpty { content.messages = (content.messages ?? []) + newMessages }
            session.content = content
            screen = .detail(session)
        case .exportScope(let scope):
            if case .prompt(.exportHAR, let editor, let error)? = overlay {
                overlay = .prompt(.exportHAR(scope: scope), editor, error: error)
            }
        case .clipboard(let bytes, let what):
            copied(bytes, what: what)
        case .breakpoints(let state):
            breakpointsArrived(state)
        case .editReady(let session):
            pendingEdit = session
            message = nil
        case .searchMatches(let highlight):
            if highlight.text == search?.text, highlight.ids == searchHighlight.ids { searchHighlight = highlight }
        }
    }
}
