import CaptureTestSupport
import FlowFilter
import GRDB
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// The SQL half of a filter agrees with the Swift half: for every expression of a fixed list,
/// `forEachFlow(matching:)` yields exactly the flows `FlowFilter.matches` accepts, and where the
/// SQL condition claims to be exact it selects them on its own.
final class FilterSQLConditionTests: XCTestCase {
    func testSQLAndSwiftSelectTheSameFlows() throws {
        // Small full-text shards: searches read several (`FullTextIndex`).
        let saved = FullTextIndex.shardSize
        FullTextIndex.shardSize = 7
        defer { FullTextIndex.shardSize = saved }
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        var stored: [Flow] = []
        try repository.forEachFlow(matching: FlowQuery()) { stored.append($0) }
        XCTAssertEqual(stored.count, FilterCorpus.flows.count)
        XCTAssertGreaterThanOrEqual(FilterCorpus.expressions.count, 40)

        var exactCount = 0
        for text in FilterCorpus.expressions {
            if try assertSQLAgreesWithSwift(text, stored: stored, repository: repository) { exactCount += 1 }
        }
        XCTAssertGreaterThanOrEqual(exactCount, 20, "most of the list must exercise pure SQL")
    }

    /// Long chains and deep nesting stay within SQLite's parser stack and still agree with Swift.
    func testLongChainsAndDeepNesting() throws {
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        var stored: [Flow] = []
        try repository.forEachFlow(matching: FlowQuery()) { stored.append($0) }
        let orChain = (600..<899).map { "~c \($0)" }.joined(separator: " | ") + " | ~c 404"
        let andChain = Array(repeating: "!~c 999", count: 299).joined(separator: " & ") + " & ~d api"
        let notChain = String(repeating: "!", count: 60) + "~c 200"
        let oddNotChain = String(repeating: "!", count: 61) + "~c 200"
        // 45 levels of alternating `!(… | (… & …))`: deeper than the SQL keeps exact.
        var nested = "~c 200"
        for level in 0..<45 { nested = level % 2 == 0 ? "!(~c 999 | \(nested))" : "(~s & \(nested))" }
        // 5,000 terms: grouped under SQLite's expression depth limit (1000).
        let longOrChain = (0..<5_000).map { "~c \(600 + $0 % 300)" }.joined(separator: " | ") + " | ~c 404"
        for text in [orChain, andChain, notChain, oddNotChain, nested, longOrChain] {
            let isExact = try assertSQLAgreesWithSwift(text, stored: stored, repository: repository)
            XCTAssertEqual(isExact, text != nested, String(text.prefix(40)))
        }
    }

    /// Checks one filter against the stored flows; true when its SQL is exact.
    private func assertSQLAgreesWithSwift(_ text: String, stored: [Flow], repository: TrafficRepository,
                                          file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let filter = try FlowFilter(parsing: text)
        let expected = stored.filter(filter.matches).compactMap(\.id)
        let shown = String(text.prefix(80))
        XCTAssertFalse(expected.isEmpty, "\(shown) matches nothing: a weak case", file: file, line: line)
        XCTAssertNotEqual(expected.count, stored.count, "\(shown) matches everything: a weak case", file: file, line: line)

        let query = FlowQuery(filter: filter)
        var delivered: [Int64] = []
        try repository.forEachFlow(matching: query) { delivered.append($0.id!) }
        XCTAssertEqual(delivered, expected, shown, file: file, line: line)
        XCTAssertEqual(try repository.count(matching: query), expected.count, shown, file: file, line: line)

        // A slice of the id space, as the TUI reads (a search reads only the shards it spans).
        XCTAssertEqual(try repository.matchingFlowIDs(in: 9...22, query: query), expected.filter { (9...22).contains($0) },
                       "slice of \(shown)", file: file, line: line)
        XCTAssertEqual(try repository.matchingFlowIDs(among: [25, 3, 17, 8], query: query),
                       [25, 3, 17, 8].filter(expected.contains), "among of \(shown)", file: file, line: line)
        let selected = try repository.flowIDsSelectedBySQL(query)
        let isExact = FilterSQLCondition(filter.expression).isExact
        if isExact {
            XCTAssertEqual(selected, expected, "exact SQL for \(shown)", file: file, line: line)
        } else {
            XCTAssertTrue(Set(expected).isSubset(of: selected), "superset SQL for \(shown)", file: file, line: line)
        }
        let earliest = try XCTUnwrap(try repository.earliestStart(matching: query), shown, file: file, line: line)
        let firstMatch = try XCTUnwrap(stored.first { $0.id == expected.first }, file: file, line: line)
        XCTAssertLessThanOrEqual(earliest, firstMatch.startedAt.addingTimeInterval(0.001), shown, file: file, line: line)
        return isExact
    }

    /// Which predicates SQL answers exactly, and how exactness combines.
    func testExactnessRules() throws {
        let exact = ["~d a", "~m GET", "~c 200", "~marked", "~replay", "!~replay", "~q", "~s", "~e", "~http", "~tcp", "~all", "~rule a",
                     "!~c 200", "~d a & ~c 200", "~d a | !~e", "!(~q | ~marked)", "!~rule a | ~c 200"]
        let superset = ["~u a", "a", "~t a", "~tq a", "~ts a", "~h a", "~hq a", "~hs a", "~b a", "~bq a", "~bs a",
                        "~websocket", "~d a & ~b x", "~c 200 | ~h x", "!~b x", "!(~d a & ~u b)"]
        for text in exact {
            XCTAssertTrue(FilterSQLCondition(try FlowFilter(parsing: text).expression).isExact, text)
        }
        for text in superset {
            XCTAssertFalse(FilterSQLCondition(try FlowFilter(parsing: text).expression).isExact, text)
        }
        // A superset conjunct still narrows the rows read, and a negated superset reads everything.
        // (A status counts unless the flow is a failed tunnel: older captures stored those with 200.)
        let status = "(status IS ? AND (kind IS NOT 'tunnel' OR error IS NULL))"
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "~c 404 & ~b x").expression).sql, status)
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "!(~c 404 & ~b x)").expression).sql, "1")
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "~c 404 | ~b x").expression).sql, "1")
        // Chains are flat lists; double negation folds away.
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "~c 1 | ~c 2 | ~c 3").expression).sql,
                       "(\(status) OR \(status) OR \(status))")
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "!!!~e & ~s ~marked").expression).sql,
                       "(NOT (error IS NOT NULL) AND (status IS NOT NULL AND (kind IS NOT 'tunnel' OR error IS NULL)) AND marked <> 0)")
    }

    /// The regex functions are case-insensitive, search anywhere, and answer 0 for NULL; the rules
    /// one tests each name of the JSON array on its own, and answers 0 for anything else.
    func testRegexFunction() throws {
        let repository = try makeRepository()
        let answers = try repository.database.pool.read { db in
            try Int.fetchAll(db, sql: """
                SELECT proxyapp_regexp('^API\\.', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('example', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('^example', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('x', NULL) UNION ALL
                SELECT proxyapp_rules_regexp('^block', '["staging","Block ads"]') UNION ALL
                SELECT proxyapp_rules_regexp('ads$', '["Block ads here"]') UNION ALL
                SELECT proxyapp_rules_regexp('g.*B', '["staging","Block ads"]') UNION ALL
                SELECT proxyapp_rules_regexp('"', '["say \\"hi\\""]') UNION ALL
                SELECT proxyapp_rules_regexp('', '[]') UNION ALL
                SELECT proxyapp_rules_regexp('', 'a') UNION ALL
                SELECT proxyapp_rules_regexp('', NULL)
                """)
        }
        XCTAssertEqual(answers, [1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0])
    }
}
