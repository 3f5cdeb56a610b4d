import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// The `v10-replay-of` column: a replay's link to its original survives a write and a read (list
/// rows included), NULL for everything else; a hand-written value never makes a flow unreadable;
/// a capture written before v10 is upgraded.
final class ReplayOfColumnTests: XCTestCase {
    func testRoundTrip() throws {
        let repository = try makeRepository()
        var replay = Samples.fullHTTP
        replay.replayOf = 41
        let ids = try repository.insert([replay, Samples.flow(2)])
        replay.id = ids[0]
        XCTAssertEqual(try repository.flow(id: ids[0]), replay)
        XCTAssertNil(try repository.flow(id: ids[1])?.replayOf)
        XCTAssertEqual(try repository.listedFlows(ids: ids).map(\.replayOf), [41, nil])
        let nulls = try repository.database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM flows WHERE replay_of IS NULL")
        }
        XCTAssertEqual(nulls, 1)
    }

    func testHandWrittenValuesStayReadable() throws {
        let repository = try makeRepository()
        let ids = try repository.insert([Samples.flow(1), Samples.flow(2)])
        try repository.database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET replay_of = 'seven' WHERE id = ?", arguments: [ids[0]])
            try db.execute(sql: "UPDATE flows SET replay_of = x'00ff' WHERE id = ?", arguments: [ids[1]])
        }
        XCTAssertEqual(try ids.map { try repository.flow(id: $0)?.replayOf }, [nil, nil])
    }

    func testVersion9DatabaseIsUpgraded() throws {
        let path = try makeOldCapture(in: try makeTemporaryDirectory(), upTo: "v9-websocket-messages")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        var new = Samples.flow(2)
        new.replayOf = 1
        try repository.insert([new])
        let flows = try repository.latestFlows(limit: 2)
        XCTAssertEqual(flows.map(\.replayOf), [1, nil])
        XCTAssertEqual(flows.last?.url, "http://old.test/before")
    }
}
