/// The detail view's position as a value: the tab, and per tab the first line shown (and the
/// row within it when long lines wrap), the horizontal offset and the body view mode the user
/// picked; and whether long lines wrap (the default; `w` toggles, Left/Right turn it off).
///
/// Per tab, so flipping between Request and Response keeps each one's place and view. Actions
/// take the content and screen size because scrolling is clamped to what there is to show; the
/// renderer clamps again, since a body that finishes loading changes the line count.
public struct FlowDetailState: Sendable, Equatable {
    public var tab: DetailTab
    private var tops: [DetailTab: Int] = [:]
    private var lefts: [DetailTab: Int] = [:]
    private var chosenModes: [DetailTab: BodyViewMode] = [:]
    /// The row within the top line where it wraps onto several rows.
    private var topRows: [DetailTab: Int] = [:]
    /// Long lines (notes, errors, headers, text and JSON bodies; never hex) continue on the next
    /// rows instead of being cut at the screen's edge.
    public var wraps = true
    /// Request and Response show the origin's side: the request as forwarded, the response as
    /// the origin sent it (only ever true for a flow that has one).
    public private(set) var showsOriginSide = false

    /// Words of the full-text searches in force, drawn reversed on every page.
    public var highlight = WordHighlight([])

    /// Columns one Left or Right moves.
    public static let horizontalStep = 8

    public init(tab: DetailTab = .response) {
        self.tab = tab
    }

    /// The first content line shown on `tab` (before clamping to the content).
    public func top(of tab: DetailTab) -> Int { tops[tab] ?? 0 }

    /// The first row shown on `tab`: a line and, when it wraps, the row within it.
    public func position(of tab: DetailTab) -> DetailPosition {
        DetailPosition(line: top(of: tab), row: topRows[tab] ?? 0)
    }

    /// The first content column shown on `tab`.
    public func left(of tab: DetailTab) -> Int { lefts[tab] ?? 0 }

    /// The view mode the user picked for `tab`'s body, if any (else the body's detected mode applies).
    public func chosenMode(of tab: DetailTab) -> BodyViewMode? { chosenModes[tab] }

    /// The view mode `tab`'s body is shown in; nil while it loads and on the Timing tab.
    public func bodyMode(of tab: DetailTab, content: FlowDetailContent) -> BodyViewMode? {
        page(tab, content: content).mode
    }

    public mutating func apply(_ action: DetailAction, content: FlowDetailContent, size: ScreenSize) {
        let rows = max(1, FlowDetailRenderer.contentRows(screenHeight: size.height))
        if wraps, let moved = wrappedMove(action, content: content, size: size, rows: rows) {
            tops[tab] = moved.line
            topRows[tab] = moved.row
            clamp(content: content, size: size)
            return
        }
        switch action {
        case .nextTab: tab = Self.tab(after: tab, by: 1, in: content.tabs)
        case .previousTab: tab = Self.tab(after: tab, by: -1, in: content.tabs)
        case .selectTab(let selected): if content.tabs.contains(selected) { tab = selected }
        case .scrollUp: tops[tab] = top(of: tab) - 1
        case .scrollDown: tops[tab] = top(of: tab) + 1
        case .pageUp: tops[tab] = top(of: tab) - rows
        case .pageDown: tops[tab] = top(of: tab) + rows
        case .top: tops[tab] = 0
        case .bottom: tops[tab] = Int.max / 2
        case .scrollLeft, .scrollRight:
            if wraps { setWraps(false) }  // scrolling sideways means seeing lines whole: unwrap
            lefts[tab] = left(of: tab) + (action == .scrollLeft ? -Self.horizontalStep : Self.horizontalStep)
        case .toggleWrap: setWraps(!wraps)
        case .cycleBodyView:
            guard let document = content.body(for: tab), let current = bodyMode(of: tab, content: content),
                  let position = document.availableModes.firstIndex(of: current)
            else { break }
            chosenModes[tab] = document.availableModes[(position + 1) % document.availableModes.count]
        case .toggleOriginSide:
            // A flow no rule changed has one side only (the controller says so).
            guard content.flow.hasOriginSide else { break }
            showsOriginSide.toggle()
            chosenModes = [:]
        }
        clamp(content: content, size: size)
    }

    /// Vertical moves over wrapped rows; nil for the actions that are not vertical moves.
    private func wrappedMove(_ action: DetailAction, content: FlowDetailContent, size: ScreenSize,
                             rows: Int) -> DetailPosition? {
        let wrapped = WrappedRows(page: page(tab, content: content), width: size.width, wraps: true)
        let position = position(of: tab)
        switch action {
        case .scrollUp: return wrapped.advance(position, by: -1)
        case .scrollDown: return wrapped.advance(position, by: 1)
        case .pageUp: return wrapped.advance(position, by: -rows)
        case .pageDown: return wrapped.advance(position, by: rows)
        case .top: return DetailPosition(line: 0)
        case .bottom: return wrapped.lastTop(rows: rows)
        default: return nil
        }
    }

    /// Wrapping on or off: every tab keeps its top line, starts at that line's first row and
    /// at the left edge.
    private mutating func setWraps(_ on: Bool) {
        wraps = on
        topRows = [:]
        lefts = [:]
    }

    /// Keeps the current tab's offsets within its content: the last line no higher than the
    /// bottom of the screen, and no scrolling right past the widest line on screen.
    private mutating func clamp(content: FlowDetailContent, size: ScreenSize) {
        let page = page(tab, content: content)
        let rows = FlowDetailRenderer.contentRows(screenHeight: size.height)
        if wraps {
            let wrapped = WrappedRows(page: page, width: size.width, wraps: true)
            let position = min(wrapped.clampedRow(position(of: tab)), wrapped.lastTop(rows: rows))
            tops[tab] = position.line
            topRows[tab] = position.row
            lefts[tab] = 0
            return
        }
        let top = Self.clampedTop(top(of: tab), lineCount: page.lineCount, rows: rows)
        tops[tab] = top
        let widest = (top..<min(page.lineCount, top + rows)).reduce(0) { max($0, page.line($1).width) }
        lefts[tab] = min(max(0, left(of: tab)), max(0, widest - size.width))
    }

    /// `top` within `0...lineCount - rows` (at least one line stays in view on a screen too
    /// short for content, so the position never reads past the end).
    static func clampedTop(_ top: Int, lineCount: Int, rows: Int) -> Int {
        min(max(0, top), max(0, lineCount - max(1, rows)))
    }

    func page(_ tab: DetailTab, content: FlowDetailContent) -> DetailPage {
        var page = DetailPage(content: showsOriginSide ? content.originSide : content, tab: tab, mode: chosenModes[tab])
        page.highlight = highlight
        return page
    }

    private static func tab(after tab: DetailTab, by step: Int, in all: [DetailTab]) -> DetailTab {
        let index = all.firstIndex(of: tab) ?? 0
        return all[(index + step + all.count) % all.count]
    }
}
