import CaptureTestSupport
import FlowFilter
import Foundation
import GRDB
import ProxyModel
import XCTest

@testable import CaptureStore

/// `FlowQuery`'s time and marked constraints, counting, the earliest start, and what a row that
/// cannot be read does to a filtered read.
final class FlowQueryTests: XCTestCase {
    /// `since` keeps flows that started at or after it (to the millisecond), `markedOnly` the
    /// marked ones, and both combine with a filter.
    func testSinceAndMarkedOnly() throws {
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        let all = try ids(repository, FlowQuery())
        XCTAssertEqual(all.count, 30)

        let cut = FilterCorpus.flows[10].startedAt
        XCTAssertEqual(try ids(repository, FlowQuery(since: cut)), Array(all[10...]))
        XCTAssertEqual(try ids(repository, FlowQuery(since: cut.addingTimeInterval(0.001))), Array(all[11...]))

        let marked = zip(all, FilterCorpus.flows).filter { $0.1.marked }.map(\.0)
        XCTAssertFalse(marked.isEmpty)
        XCTAssertEqual(try ids(repository, FlowQuery(markedOnly: true)), marked)

        let filter = try FlowFilter(parsing: "~h mozilla")
        let expected = zip(all, FilterCorpus.flows)
            .filter { $0.1.startedAt >= cut && $0.1.marked && filter.matches($0.1) }.map(\.0)
        XCTAssertFalse(expected.isEmpty)
        let query = FlowQuery(filter: filter, since: cut, markedOnly: true)
        XCTAssertEqual(try ids(repository, query), expected)
        XCTAssertEqual(try repository.count(matching: query), expected.count)
        XCTAssertEqual(try repository.count(matching: FlowQuery(since: cut)), 20)
    }

    /// The earliest start of what the query selects; nil for an empty selection.
    func testEarliestStart() throws {
        let repository = try makeRepository()
        XCTAssertNil(try repository.earliestStart(matching: FlowQuery()))
        try repository.insert(FilterCorpus.flows)
        XCTAssertEqual(try repository.earliestStart(matching: FlowQuery()), FilterCorpus.flows[0].startedAt)
        let tunnel = try XCTUnwrap(FilterCorpus.flows.first { $0.kind == .tunnel })
        XCTAssertEqual(try repository.earliestStart(matching: FlowQuery(filter: FlowFilter(parsing: "~tcp"))),
                       tunnel.startedAt)
        XCTAssertNil(try repository.earliestStart(matching: FlowQuery(filter: FlowFilter(parsing: "~c 999"))))
    }

    /// A row that cannot be decoded stops the read with an error after the flows before it:
    /// never skipped silently.
    func testMalformedRowThrows() throws {
        let repository = try makeRepository()
        let stored = try repository.insert(Array(FilterCorpus.flows.prefix(4)))
        try repository.database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET kind = 'bogus' WHERE id = ?", arguments: [stored[2]])
        }
        for query in [FlowQuery(), FlowQuery(filter: try FlowFilter(parsing: "~h host"))] {
            var delivered: [Int64] = []
            XCTAssertThrowsError(try repository.forEachFlow(matching: query) { delivered.append($0.id!) }) { error in
                guard case CaptureStoreError.malformedRow(let detail) = error else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertTrue(detail.contains("bogus"), detail)
            }
            XCTAssertEqual(delivered, Array(stored.prefix(2)))
        }
        XCTAssertThrowsError(try repository.count(matching: FlowQuery(filter: try FlowFilter(parsing: "~b x"))))
    }

    /// An error thrown by the caller's closure ends the read and reaches the caller.
    func testClosureErrorPropagates() throws {
        struct Stop: Error {}
        let repository = try makeRepository()
        try repository.insert(Array(FilterCorpus.flows.prefix(3)))
        var seen = 0
        XCTAssertThrowsError(try repository.forEachFlow(matching: FlowQuery()) { _ in
            seen += 1
            throw Stop()
        }) { XCTAssertTrue($0 is Stop) }
        XCTAssertEqual(seen, 1)
    }

    private func ids(_ repository: TrafficRepository, _ query: FlowQuery) throws -> [Int64] {
        var ids: [Int64] = []
        try repository.forEachFlow(matching: query) { ids.append($0.id!) }
        return ids
    }
}

extension FlowQueryTests {
    /// A query says whether SQL alone answers it (the TUI reads smaller first slices when not).
    func testWhetherSQLAloneAnswers() throws {
        XCTAssertTrue(FlowQuery().isAnsweredBySQL)
        XCTAssertTrue(FlowQuery(filter: try FlowFilter(parsing: "~d api & ~c 200")).isAnsweredBySQL)
        XCTAssertFalse(FlowQuery(filter: try FlowFilter(parsing: "~u login")).isAnsweredBySQL)
        XCTAssertFalse(FlowQuery(filter: try FlowFilter(parsing: "~d api & ~b secret")).isAnsweredBySQL)
    }
}
