/// A movement in the flow list, produced by key bindings and applied by `FlowListState`.
public enum FlowListAction: Sendable, Hashable, CaseIterable {
    case moveUp, moveDown, pageUp, pageDown, home
    /// Jump to the last row and follow the tail (End).
    case end
    /// Resume following the tail (`F`): the same as `end`, named for what the user asked.
    case follow
}

/// The flow list's selection and scroll window over a table of `totalRows` rows, as a value.
///
/// It knows row indexes, never flows: the rows themselves are loaded from the capture store for
/// the `neededRange` only, so a list of a million flows costs no more than a list of a screenful.
/// Invariants after every change: the selection (when there are rows) lies in
/// `top ..< top + visibleRows`, and `top` never scrolls past the point where the last row is at
/// the bottom. While `isFollowing`, the last row is selected and new rows scroll into view.
public struct FlowListState: Sendable, Equatable {
    public private(set) var totalRows: Int
    /// How many rows the list area shows.
    public private(set) var visibleRows: Int
    /// Index of the selected row; nil when the list is empty.
    public private(set) var selectedIndex: Int?
    /// Index of the first visible row.
    public private(set) var top: Int
    public private(set) var isFollowing: Bool
    /// The view filter as the user typed it; empty for none.
    public var filterText: String
    /// The first row index of `loadedRows`.
    public private(set) var loadedOffset: Int
    /// A window of loaded rows, normally `neededRange`.
    public private(set) var loadedRows: [FlowRow]

    public init(totalRows: Int = 0, visibleRows: Int = 0, filterText: String = "") {
        self.totalRows = max(0, totalRows)
        self.visibleRows = max(0, visibleRows)
        self.filterText = filterText
        selectedIndex = nil
        top = 0
        isFollowing = true
        loadedOffset = 0
        loadedRows = []
        followTail()
    }

    /// The row indexes the view shows, and so needs loaded.
    public var neededRange: Range<Int> {
        top..<min(totalRows, top + visibleRows)
    }

    /// Whether some row of `neededRange` is missing from the loaded window.
    public var needsLoading: Bool {
        let needed = neededRange
        guard !needed.isEmpty else { return false }
        return needed.lowerBound < loadedOffset || needed.upperBound > loadedOffset + loadedRows.count
    }

    /// The loaded row at `index`, or nil when it is outside the loaded window.
    public func row(at index: Int) -> FlowRow? {
        let position = index - loadedOffset
        return loadedRows.indices.contains(position) ? loadedRows[position] : nil
    }

    /// Replaces the loaded window with `rows` starting at row `offset`.
    public mutating func load(_ rows: [FlowRow], at offset: Int) {
        loadedOffset = offset
        loadedRows = rows
    }

    /// The list area changed height: keep the selection visible (and the tail, when following).
    public mutating func resize(visibleRows: Int) {
        self.visibleRows = max(0, visibleRows)
        if isFollowing { followTail() } else { settle() }
    }

    public mutating func apply(_ action: FlowListAction) {
        guard let selected = selectedIndex else {
            if action == .end || action == .follow { isFollowing = true }
            return
        }
        let page = max(1, visibleRows)
        switch action {
        case .moveUp: select(selected - 1)
        case .moveDown: select(selected + 1)
        case .pageUp:
            top -= page
            select(selected - page)
        case .pageDown:
            top += page
            select(selected + page)
        case .home:
            top = 0
            select(0)
        case .end, .follow:
            isFollowing = true
            followTail()
        }
    }

    /// The table grew (or, after a delete, shrank) to `newTotal` rows. Following: select the last
    /// row and scroll it into view. Not following: selection and top stay where they are.
    public mutating func rowsAppended(newTotal: Int) {
        totalRows = max(0, newTotal)
        if isFollowing {
            followTail()
        } else if totalRows == 0 {
            selectedIndex = nil
            top = 0
        } else {
            selectedIndex = min(selectedIndex ?? 0, totalRows - 1)
            settle()
        }
    }

    /// `count` rows were inserted before the first row (an older part of a filtered view arrived):
    /// the same rows stay selected and on screen, now further down the table.
    public mutating func rowsPrepended(_ count: Int) {
        guard count > 0 else { return }
        totalRows += count
        if isFollowing {
            followTail()
        } else {
            selectedIndex = (selectedIndex ?? -count) + count
            top += count
            settle()
        }
    }

    private var lastIndex: Int { totalRows - 1 }

    /// Selects `index` (clamped) and scrolls it into view; a selection off the last row stops
    /// following. For jumps: a search match, a mouse click.
    public mutating func select(_ index: Int) {
        guard totalRows > 0 else { return }
        let clamped = min(max(0, index), lastIndex)
        selectedIndex = clamped
        if clamped != lastIndex { isFollowing = false }
        settle()
    }

    private mutating func followTail() {
        guard totalRows > 0 else {
            selectedIndex = nil
            top = 0
            return
        }
        selectedIndex = lastIndex
        top = max(0, totalRows - visibleRows)
    }

    /// Clamps `top` to the table and scrolls the least needed to show the selection.
    private mutating func settle() {
        top = min(max(0, top), max(0, totalRows - visibleRows))
        guard let selected = selectedIndex else { return }
        if selected < top { top = selected }
        if visibleRows > 0, selected >= top + visibleRows { top = selected - visibleRows + 1 }
        if visibleRows == 0 { top = selected }
    }
}
