import Foundation
import ProxyModel

/// A capture the TUI and the commands read and edit: the local SQLite file
/// (`TrafficRepository`) or a team's shared PostgreSQL store (`PostgresFlowStore` in
/// SharedCapture). Everything a viewer does goes through it, so `proxyapp tui` and `export` work
/// the same on either.
///
/// A reader tails the capture by asking for ids above the last it saw, up to `lastFlowID`: each
/// store guarantees that no flow below that id becomes visible later (the shared store, whose
/// proxies commit in any order, through `PostgresTailWatermark`). Every method blocks its
/// caller: call it off event loops and off the UI thread.
public protocol FlowStore: Sendable {
    /// True for a store several proxies write to: flows carry `Flow.proxyName`, and views show
    /// which proxy captured each.
    var isShared: Bool { get }

    /// The id up to which a reader may tail: the highest stored id (0 when the capture is empty),
    /// or lower, so that every flow below it that will ever be visible already is.
    func lastFlowID() throws -> Int64
    /// The ids in `ids` (both ends included) whose flows match `query`, ascending.
    func matchingFlowIDs(in ids: ClosedRange<Int64>, query: FlowQuery) throws -> [Int64]
    /// Those of `ids` whose flows match `query`, in the order given.
    func matchingFlowIDs(among ids: [Int64], query: FlowQuery) throws -> [Int64]
    /// The flows with these ids, in the order given (missing ids left out), without their bodies
    /// (sizes kept): a list view's rows.
    func listedFlows(ids: [Int64]) throws -> [Flow]
    /// The flow with this id, bodies included, or nil.
    func flow(id: Int64) throws -> Flow?
    /// A WebSocket flow's messages, oldest first, from `offset`, at most `limit`.
    func messages(flowID id: Int64, offset: Int, limit: Int) throws -> [CapturedMessage]
    /// How many flows match `query`, exactly.
    func count(matching query: FlowQuery) throws -> Int
    /// Calls `body` with every flow matching `query`, oldest first, one flow in memory at a time;
    /// with `withMessages`, WebSocket flows come with their messages.
    func forEachFlow(matching query: FlowQuery, withMessages: Bool, _ body: (Flow) throws -> Void) throws
    /// The start of the earliest flow matching `query` (or of a superset of them), nil when none.
    func earliestStart(matching query: FlowQuery) throws -> Date?

    /// Sets or clears a flow's mark; false when no flow has that id.
    @discardableResult
    func setMarked(_ marked: Bool, id: Int64) throws -> Bool
    /// Deletes these flows (ids not stored are ignored).
    func delete(ids: [Int64]) throws
    /// Deletes every flow; returns how many there were.
    @discardableResult
    func deleteAllFlows() throws -> Int

    /// The hosts pinned (passed through without interception), for the pins view.
    func pinnedDomains() throws -> [PinnedDomain]
    /// Removes one pin; false when there was none.
    @discardableResult
    func removePin(_ key: PinnedDomain.Key) throws -> Bool
}

extension TrafficRepository: FlowStore {
    public var isShared: Bool { false }
}

extension FlowStore {
    /// A WebSocket flow's first `limit` messages.
    public func messages(flowID id: Int64, limit: Int) throws -> [CapturedMessage] {
        try messages(flowID: id, offset: 0, limit: limit)
    }
}
