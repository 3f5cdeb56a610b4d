import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import XCTest

@testable import CaptureStore

/// `TrafficRepository.insertAll` (imports) and `delete(ids:)`.
final class ImportInsertTests: XCTestCase {
    /// Chunks land in order with consecutive ids, and every flow reads back as written.
    func testInsertAllInChunksKeepsOrder() throws {
        let repository = try makeRepository()
        let flows = (0..<7).map { Samples.flow($0) }
        let ids = try repository.insertAll(flows, chunkSize: 3)
        XCTAssertEqual(ids.count, 7)
        XCTAssertEqual(ids, Array(ids[0]...ids[0] + 6))
        for (id, flow) in zip(ids, flows) {
            var expected = flow
            expected.id = id
            XCTAssertEqual(try repository.flow(id: id), expected)
        }
    }

    /// When a later chunk fails, the chunks already written are removed again, and flows that
    /// were in the store before are untouched.
    func testFailingChunkLeavesTheStoreAsItWas() throws {
        let repository = try makeRepository()
        let existing = try repository.insert([Samples.flow(100), Samples.flow(101)])
        // A trigger that refuses one particular host makes the third chunk fail mid-import.
        try repository.database.pool.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_bad BEFORE INSERT ON flows WHEN NEW.host = 'refused.test'
                BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END
                """)
        }
        var flows = (0..<8).map { Samples.flow($0) }
        flows[6].host = "refused.test"
        XCTAssertThrowsError(try repository.insertAll(flows, chunkSize: 3)) { error in
            XCTAssertTrue("\(error)".contains("refused by test trigger"), "\(error)")
        }
        XCTAssertEqual(try repository.count(), 2)
        XCTAssertEqual(try repository.latestFlows(limit: 10).compactMap(\.id).sorted(), existing)
    }

    /// A streamed import: chunks are stored as flows arrive (by count or by body bytes), the
    /// store is opened only for the first chunk, and `rollBack` removes what was stored.
    func testFlowImportStoresChunksAndRollsBack() throws {
        let repository = try makeRepository()
        let existing = try repository.insert([Samples.flow(100)])
        var opened = 0
        let flowImport = FlowImport(chunkSize: 3, chunkBodyBytes: 1_000) {
            opened += 1
            return repository
        }
        try flowImport.add(Samples.flow(0))
        try flowImport.add(Samples.flow(1))
        XCTAssertEqual(opened, 0, "nothing stored before a chunk is full")
        try flowImport.add(Samples.flow(2))
        XCTAssertEqual(try repository.count(), 4)
        var large = Samples.flow(3)
        large.responseBody = CapturedBody(bytes: Data(count: 1_000), size: 1_000)
        try flowImport.add(large)
        XCTAssertEqual(try repository.count(), 5, "a chunk is also full at chunkBodyBytes")
        try flowImport.add(Samples.flow(4))
        XCTAssertEqual(flowImport.ids.count, 4)
        flowImport.rollBack()
        XCTAssertEqual(try repository.count(), 1)
        XCTAssertEqual(try repository.latestFlows(limit: 10).compactMap(\.id), existing)
        XCTAssertEqual(opened, 1)
    }

    func testDeleteIgnoresUnknownIds() throws {
        let repository = try makeRepository()
        let ids = try repository.insert((0..<3).map { Samples.flow($0) })
        try repository.delete(ids: [ids[1], 9_999])
        XCTAssertEqual(try repository.latestFlows(limit: 10).compactMap(\.id).sorted(), [ids[0], ids[2]])
        try repository.delete(ids: [])
        XCTAssertEqual(try repository.count(), 2)
    }
}
