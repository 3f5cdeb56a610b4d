import CaptureTestSupport
import FlowFilter
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// `matchingFlowIDs(in:query:)`, the TUI's sliced reads: for every expression of the filter
/// corpus it selects, slice by slice, exactly the flows `FlowFilter.matches` accepts, whichever
/// columns it chose to read (bodies, headers, or neither).
final class ScanningTests: XCTestCase {
    func testSlicesSelectWhatSwiftSelects() throws {
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        var stored: [Flow] = []
        try repository.forEachFlow(matching: FlowQuery()) { stored.append($0) }
        let last = try repository.lastFlowID()
        XCTAssertEqual(last, stored.last?.id)
        for text in FilterCorpus.expressions {
            let filter = try FlowFilter(parsing: text)
            let expected = stored.filter(filter.matches).compactMap(\.id)
            // Three uneven slices, newest first, as the feed reads them.
            let cuts: [ClosedRange<Int64>] = [max(1, last - 4)...last, 4...max(4, last - 5), 1...3]
            let found = try cuts.reversed().flatMap { try repository.matchingFlowIDs(in: $0, query: FlowQuery(filter: filter)) }
            XCTAssertEqual(found, expected, text)
        }
    }

    func testWhatEachFilterReads() throws {
        XCTAssertTrue(try FlowFilter(parsing: "~u a | ~bs x").expression.readsBodies)
        XCTAssertFalse(try FlowFilter(parsing: "~u a & !(~h x)").expression.readsBodies)
        XCTAssertTrue(try FlowFilter(parsing: "~u a & !(~h x)").expression.readsHeaders)
        XCTAssertTrue(try FlowFilter(parsing: "~ts json").expression.readsHeaders)
        XCTAssertTrue(try FlowFilter(parsing: "~websocket").expression.readsHeaders)
        XCTAssertFalse(try FlowFilter(parsing: "~u login | ~d api & ~c 200").expression.readsHeaders)
    }

    func testDeleteAllFlowsKeepsPins() throws {
        let repository = try makeRepository()
        try repository.insert(FilterCorpus.flows)
        let now = Date()
        try repository.savePin(PinnedDomain(host: "p.test", reason: "r", evidence: "", firstSeen: now, lastSeen: now, count: 1))
        XCTAssertEqual(try repository.deleteAllFlows(), FilterCorpus.flows.count)
        XCTAssertEqual(try repository.count(), 0)
        XCTAssertEqual(try repository.lastFlowID(), 0)
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["p.test"])
    }
}
