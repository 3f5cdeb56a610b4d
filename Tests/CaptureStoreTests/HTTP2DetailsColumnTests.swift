import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// The `v8-http2-details` columns: response trailers and the HTTP/2 stream id survive a write and
/// a read (list rows included); flows without them store NULL; a hand-written value that is not a
/// header list never makes a flow unreadable; a capture written before v8 is upgraded.
final class HTTP2DetailsColumnTests: XCTestCase {
    static let trailers = [HeaderField(name: "grpc-status", value: "5"), HeaderField(name: "grpc-message", value: "no such thing")]

    func testRoundTrip() throws {
        let repository = try makeRepository()
        var grpc = Samples.fullHTTP
        grpc.httpVersion = "HTTP/2.0"
        grpc.responseTrailers = Self.trailers
        grpc.streamID = 2_147_483_647
        let ids = try repository.insert([grpc, Samples.flow(2)])
        grpc.id = ids[0]
        XCTAssertEqual(try repository.flow(id: ids[0]), grpc)
        let plain = try XCTUnwrap(repository.flow(id: ids[1]))
        XCTAssertEqual(plain.responseTrailers, [])
        XCTAssertNil(plain.streamID)
        let listed = try repository.listedFlows(ids: [ids[0]])
        XCTAssertEqual(listed.first?.streamID, 2_147_483_647)
        XCTAssertEqual(listed.first?.responseTrailers, Self.trailers)
        let nulls = try repository.database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM flows WHERE response_trailers IS NULL AND stream_id IS NULL")
        }
        XCTAssertEqual(nulls, 1, "a flow without trailers or stream stores NULL in both")
    }

    func testHandWrittenValuesStayReadable() throws {
        let repository = try makeRepository()
        let ids = try repository.insert([Samples.flow(1), Samples.flow(2)])
        try repository.database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET response_trailers = 'not json', stream_id = 'three' WHERE id = ?",
                           arguments: [ids[0]])
            try db.execute(sql: "UPDATE flows SET response_trailers = x'00ff', stream_id = 1.5 WHERE id = ?",
                           arguments: [ids[1]])
        }
        for id in ids {
            let flow = try XCTUnwrap(repository.flow(id: id))
            XCTAssertEqual(flow.responseTrailers, [])
        }
    }

    func testVersion7DatabaseIsUpgraded() throws {
        let path = try makeOldCapture(in: try makeTemporaryDirectory(), upTo: "v7-forwarded-messages")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        var new = Samples.flow(2)
        new.streamID = 3
        new.responseTrailers = Self.trailers
        try repository.insert([new])
        let flows = try repository.latestFlows(limit: 2)
        XCTAssertEqual(flows.map(\.streamID), [3, nil])
        XCTAssertEqual(flows.map(\.responseTrailers.count), [2, 0])
        XCTAssertEqual(flows.last?.url, "http://old.test/before")
    }
}
