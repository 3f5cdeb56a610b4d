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
}

/// Full-text search over the index (`FullTextIndex`): the newest matches first, with excerpts,
/// for `proxyapp search`. Counting and the TUI's views go through the filter language (`~fts`),
/// which the SQL of `FlowQuery` answers from the same index.
extension TrafficRepository {
    /// The newest flows (highest id first) matching `query`, at most `limit`, each with excerpts
    /// of `search` (the full-text part of the query, whose words are highlighted).
    ///
    /// The index is walked newest first and stops at `limit`: the first page of a search over
    /// millions of flows costs the same as over a few.
    public func latestFullTextHits(_ search: FullTextQuery, side: FilterMessageSide = .either, matching query: FlowQuery,
                                   limit: Int) throws -> [FullTextHit] {
        let condition = FilterSQLCondition(query)
        let filter = condition.isExact ? nil : query.filter
        let columns = filter.map { $0.expression.readsBodies(besidesFullText: true) ? "flows.*" : Self.qualifiedListingColumns }
            ?? Self.qualifiedListingColumns
        let table = FullTextIndex.table
        let match = FullTextIndex.matchText(search, side: side)
        return try database.pool.read { db in
            let cursor = try FlowRecord.fetchCursor(db, sql: """
                SELECT \(columns) FROM \(table) JOIN flows ON flows.id = \(table).rowid
                WHERE \(table) MATCH ? AND (\(condition.sql)) ORDER BY \(table).rowid DESC
                """, arguments: StatementArguments([match.databaseValue] + condition.arguments))
            var hits: [FullTextHit] = []
            while hits.count < limit, let record = try cursor.next() {
                let flow = database.bodyFiles.flow(from: record)
                if let filter, !Self.matches(filter, try Self.withMessages(flow, for: filter, db), db) { continue }
                hits.append(FullTextHit(flow: flow, excerpts: try Self.excerpts(flow.id, match, db)))
            }
            return hits
        }
    }

    /// SQLite's `snippet` of each field of flow `id` that holds a match.
    private static func excerpts(_ id: Int64?, _ match: String, _ db: Database) throws -> [(field: FullTextField, text: String)] {
        guard let id else { return [] }
        let table = FullTextIndex.table
        let start = String(FullTextHit.matchStart), end = String(FullTextHit.matchEnd)
        let snippets = FullTextField.allCases.indices.map { "snippet(\(table), \($0), ?, ?, '…', 12)" }
        guard let row = try Row.fetchOne(
            db, sql: "SELECT \(snippets.joined(separator: ", ")) FROM \(table) WHERE \(table) MATCH ? AND rowid = ?",
            arguments: StatementArguments(Array(repeating: [start, end], count: snippets.count).flatMap { $0 }
                                          + [match, id]))
        else { return [] }
        return FullTextField.allCases.enumerated().compactMap { index, field in
            let text: String = row[index] ?? ""
            return text.contains(FullTextHit.matchStart) ? (field, text) : nil
        }
    }

    /// `listingColumns` with each column named by its table (the search joins the index).
    private static let qualifiedListingColumns = listingColumns
        .split(separator: ",")
        .map { column -> String in
            let trimmed = column.trimmingCharacters(in: .whitespaces)
            return trimmed.contains(" AS ") || trimmed.hasPrefix("NULL") ? trimmed : "flows." + trimmed
        }
        .joined(separator: ", ")
}
