import CaptureStore
import FlowFilter
import Foundation
import TerminalUI

/// The search's matches among the list's loaded rows, and the ids and search they were found
/// for (a new window or a new search asks again).
struct SearchHighlight: Sendable, Equatable {
    var ids: [Int64] = []
    var text = ""
    var matches: Set<Int64> = []
}

/// Search (`s`, `n`, `N`): jumps to the next or previous matching flow of the view, wrapping
/// around its ends, and highlights the matches among the rows on screen.
extension TUIController {
    /// Jumps to the next (or previous) flow of the view that matches the search, from the
    /// selection, wrapping past the last (or first) flow; asks for a search first when there is none.
    func searchAgain(forward: Bool) {
        guard let search else {
            overlay = .prompt(.search, LineEditor(), error: nil)
            return
        }
        guard let selected = list.selectedIndex else {
            message = StatusMessage(.info, "no flows to search")
            return
        }
        let repository = repository
        let feed = feed
        let generation = snapshotGeneration
        let prepended = seenPrepended
        let query = FlowQuery(filter: search)
        message = StatusMessage(.info, "searching \(search.text)…")
        searchPending = true
        worker.perform("search failed", lane: .long) {
            let found: (id: Int64, wrapped: Bool)?
            do {
                found = try Self.findMatch(query, from: selected, prepended: prepended, forward: forward, feed: feed,
                                           repository: repository)
            } catch {
                return [.message(StatusMessage(.error, "search failed: \(CaptureErrorText.describe(error))")), .searchDone]
            }
            guard let found else { return [.message(StatusMessage(.info, "no match: \(search.text)")), .searchDone] }
            let text = found.wrapped ? "search wrapped to the \(forward ? "top" : "bottom"): \(search.text)" : "match: \(search.text)"
            return [.searchFound(id: found.id, generation: generation), .message(StatusMessage(.info, text)), .searchDone]
        }
    }

    /// The first match after `position` (before it, backward), else the first from the other
    /// end of the view up to `position` itself (`wrapped`). Walks the view's ids in slices.
    private static func findMatch(_ query: FlowQuery, from position: Int, prepended: Int, forward: Bool, feed: FlowListFeed,
                                  repository: any FlowStore) throws -> (id: Int64, wrapped: Bool)? {
        let ids = feed.ids(at: 0..<(Int.max / 2), prepended: prepended)
        guard !ids.isEmpty else { return nil }
        let from = min(max(0, position), ids.count - 1)
        let ahead = forward ? Array(ids[(from + 1)...]) : Array(ids[..<from].reversed())
        let behind = forward ? Array(ids[...from]) : Array(ids[from...].reversed())
        let slice = 2_000
        for (part, wrapped) in [(ahead, false), (behind, true)] {
            for start in stride(from: 0, to: part.count, by: slice) {
                let matching = try repository.matchingFlowIDs(among: Array(part[start..<min(part.count, start + slice)]), query: query)
                // Ids ascend down the view: the nearest match is the smallest ahead, the largest behind.
                if let found = forward ? matching.min() : matching.max() { return (found, wrapped) }
            }
        }
        return nil
    }

    /// Asks which of the loaded rows `ids` match the search, when not asked for these rows and
    /// this search already.
    func highlightSearchMatches(among ids: [Int64]) {
        guard let search, ids != searchHighlight.ids || search.text != searchHighlight.text else { return }
        // The old matches stay drawn until the answer replaces them.
        searchHighlight.ids = ids
        searchHighlight.text = search.text
        let repository = repository
        let query = FlowQuery(filter: search)
        // The long lane: a `~b` search reads bodies, and opening a flow must not wait for that.
        worker.perform("search failed", lane: .long) {
            let matches = try repository.matchingFlowIDs(among: ids, query: query)
            return [.searchMatches(SearchHighlight(ids: ids, text: search.text, matches: Set(matches)))]
        }
    }
}
