import FlowFilter
import Foundation
import GRDB
import ProxyModel

/// One flow a full-text search found, with the parts of its text that matched.
public struct FullTextHit: Sendable {
    /// The flow, without its bodies (as a list shows it).
    public var flow: Flow
    /// Up to one excerpt per field that matched, in field order: a few words around the match,
    /// each matched word between `FullTextHit.matchStart` and `matchEnd`; `…` where text was cut.
    /// Text from traffic: escape it (`TerminalText`) before it reaches a terminal.
    public var excerpts: [(field: FullTextField, text: String)]

    /// Marks the start and the end of a matched word in an excerpt (private-use characters, so a
    /// printer can swap them for colour or brackets after escaping the rest).
    public static let matchStart: Character = "\u{E000}"
    public static let matchEnd: Character = "\u{E001}"

    /// A hit on `flow` (read with its bodies), its excerpts of `search` made from its text; the
    /// hit's flow keeps only the bodies' sizes.
    public init(matching search: FullTextQuery, side: FilterMessageSide = .either, in flow: Flow) {
        var flow = flow
        excerpts = FullTextExcerpt.excerpts(of: FullTextDocument(flow), search: search, side: side,
                                            start: FullTextHit.matchStart, end: FullTextHit.matchEnd)
        flow.requestBody = CapturedBody(size: flow.requestBody.size, truncated: flow.requestBody.truncated)
        flow.responseBody = CapturedBody(size: flow.responseBody.size, truncated: flow.responseBody.truncated)
        self.flow = flow
    }
}

/// Full-text search over the index (`FullTextIndex`): the newest matches first, with excerpts
/// (`FullTextExcerpt`), for `proxyapp search`. Counting and the TUI's views go through the filter language (`~fts`),
/// which the SQL of `FlowQuery` answers from the same index.
extension TrafficRepository {
    /// The newest flows (highest id first) matching `query`, at most `limit`, each with excerpts
    /// of `search` (the full-text part of the query, whose words are highlighted).
    ///
    /// The index is read newest shard first and stops at `limit`: the first page of a search
    /// over millions of flows reads one or two shards.
    public func latestFullTextHits(_ search: FullTextQuery, side: FilterMessageSide = .either, matching query: FlowQuery,
                                   limit: Int) throws -> [FullTextHit] {
        let match = FullTextIndex.matchText(search, side: side)
        return try database.pool.read { db in
            let condition = try Self.condition(query, db)
            let filter = condition.isExact ? nil : query.filter
            var hits: [FullTextHit] = []
            // Newest shard first: a shard's matches are read, the flows of the newest of them then.
            for shard in try FullTextIndex.shards(db).reversed() where hits.count < limit {
                let table = shard.table
                let cursor = try FlowRecord.fetchCursor(db, sql: """
                    SELECT * FROM flows WHERE id IN (SELECT rowid FROM \(table) WHERE \(table) MATCH ?)
                    AND (\(condition.sql)) ORDER BY id DESC
                    """, arguments: StatementArguments([match.databaseValue] + condition.arguments))
                while hits.count < limit, let record = try cursor.next() {
                    let flow = database.bodyFiles.flow(from: record)
                    if let filter, !Self.matches(filter, try Self.withMessages(flow, for: filter, db), db) { continue }
                    hits.append(FullTextHit(matching: search, side: side, in: flow))
                }
            }
            return hits
        }
    }
}
