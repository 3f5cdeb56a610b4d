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
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        var stored: [Flow] = []
        try repository.forEachFlow(matching: FlowQuery()) { stored.append($0) }
        XCTAssertEqual(stored.count, FilterCorpus.flows.count)
        XCTAssertGreaterThanOrEqual(FilterCorpus.expressions.count, 40)

        var exactCount = 0
        for text in FilterCorpus.expressions {
            let filter = try FlowFilter(parsing: text)
            let expected = stored.filter(filter.matches).compactMap(\.id)
            XCTAssertFalse(expected.isEmpty, "\(text) matches nothing: a weak case")
            XCTAssertNotEqual(expected.count, stored.count, "\(text) matches everything: a weak case")

            let query = FlowQuery(filter: filter)
            var delivered: [Int64] = []
            try repository.forEachFlow(matching: query) { delivered.append($0.id!) }
            XCTAssertEqual(delivered, expected, text)
            XCTAssertEqual(try repository.count(matching: query), expected.count, text)

            let selected = try repository.flowIDsSelectedBySQL(query)
            if FilterSQLCondition(filter.expression).isExact {
                exactCount += 1
                XCTAssertEqual(selected, expected, "exact SQL for \(text)")
            } else {
                XCTAssertTrue(Set(expected).isSubset(of: selected), "superset SQL for \(text)")
            }
            let earliest = try XCTUnwrap(try repository.earliestStart(matching: query), text)
            let firstMatch = try XCTUnwrap(stored.first { $0.id == expected.first })
            XCTAssertLessThanOrEqual(earliest, firstMatch.startedAt.addingTimeInterval(0.001), text)
        }
        XCTAssertGreaterThanOrEqual(exactCount, 20, "most of the list must exercise pure SQL")
    }

    /// Which predicates SQL answers exactly, and how exactness combines.
    func testExactnessRules() throws {
        let exact = ["~d a", "~m GET", "~c 200", "~marked", "~q", "~s", "~e", "~http", "~tcp", "~all",
                     "!~c 200", "~d a & ~c 200", "~d a | !~e", "!(~q | ~marked)"]
        let superset = ["~u a", "a", "~t a", "~tq a", "~ts a", "~h a", "~hq a", "~hs a", "~b a", "~bq a", "~bs a",
                        "~websocket", "~d a & ~b x", "~c 200 | ~h x", "!~b x", "!(~d a & ~u b)"]
        for text in exact {
            XCTAssertTrue(FilterSQLCondition(try FlowFilter(parsing: text).expression).isExact, text)
        }
        for text in superset {
            XCTAssertFalse(FilterSQLCondition(try FlowFilter(parsing: text).expression).isExact, text)
        }
        // A superset conjunct still narrows the rows read, and a negated superset reads everything.
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "~c 404 & ~b x").expression).sql, "status IS ?")
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "!(~c 404 & ~b x)").expression).sql, "1")
        XCTAssertEqual(FilterSQLCondition(try FlowFilter(parsing: "~c 404 | ~b x").expression).sql, "1")
    }

    /// The regex function is case-insensitive, searches anywhere, and answers 0 for NULL.
    func testRegexFunction() throws {
        let repository = try makeRepository()
        let answers = try repository.database.pool.read { db in
            try Int.fetchAll(db, sql: """
                SELECT proxyapp_regexp('^API\\.', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('example', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('^example', 'api.example.com') UNION ALL
                SELECT proxyapp_regexp('x', NULL)
                """)
        }
        XCTAssertEqual(answers, [1, 1, 0, 0])
    }
}
