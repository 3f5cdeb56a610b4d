import CaptureTestSupport
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

final class TrafficRepositoryTests: XCTestCase {
    /// Every field of an HTTP flow and of a tunnel flow survives a write and a read, unchanged,
    /// and the flows get the ids `insert` returned.
    func testRoundTripKeepsEveryField() throws {
        let repository = try makeRepository()
        let ids = try repository.insert([Samples.fullHTTP, Samples.tunnel])
        XCTAssertEqual(ids.count, 2)
        XCTAssertLessThan(ids[0], ids[1])

        var expectedHTTP = Samples.fullHTTP
        expectedHTTP.id = ids[0]
        var expectedTunnel = Samples.tunnel
        expectedTunnel.id = ids[1]
        XCTAssertEqual(try repository.flow(id: ids[0]), expectedHTTP)
        XCTAssertEqual(try repository.flow(id: ids[1]), expectedTunnel)
        XCTAssertEqual(try repository.latestFlows(limit: 10), [expectedTunnel, expectedHTTP])
    }

    /// Bodies past the body-file threshold (kept in files) come back byte for byte, next to
    /// small ones in the same batch.
    func testLargeBodiesRoundTrip() throws {
        let repository = try makeRepository()
        var large = Samples.flow(1)
        let size = BodyFileStore.threshold * 5 + 123  // several blocks and a tail
        large.responseBody = CapturedBody(bytes: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }),
                                          size: Int64(size), truncated: false)
        large.requestBody = CapturedBody(bytes: Data(repeating: 7, count: BodyFileStore.threshold),
                                         size: Int64(BodyFileStore.threshold), truncated: true)
        let small = Samples.flow(2)
        let ids = try repository.insert([large, small])
        let stored = try XCTUnwrap(try repository.flow(id: ids[0]))
        XCTAssertEqual(stored.responseBody, large.responseBody)
        XCTAssertEqual(stored.requestBody, large.requestBody)
        XCTAssertEqual(try repository.flow(id: ids[1])?.responseBody, small.responseBody)
    }

    /// The store assigns ids itself: an id already on a flow is ignored, not reused.
    func testInsertIgnoresIncomingIds() throws {
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        flow.id = 999
        let ids = try repository.insert([flow, flow])
        XCTAssertEqual(ids.count, 2)
        XCTAssertNotEqual(ids[0], ids[1])
        XCTAssertNil(try repository.flow(id: 999))
    }

    /// Timestamps are stored to the millisecond.
    func testTimestampsKeepMilliseconds() throws {
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        flow.startedAt = Date(timeIntervalSince1970: 1_700_000_000.9876)
        flow.finishedAt = Date(timeIntervalSince1970: 1_700_000_001.0004)
        let id = try XCTUnwrap(try repository.insert([flow]).first)
        let stored = try XCTUnwrap(try repository.flow(id: id))
        XCTAssertEqual(stored.startedAt.timeIntervalSince1970, 1_700_000_000.988, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(stored.finishedAt).timeIntervalSince1970, 1_700_000_001.0,
                       accuracy: 1e-6)
    }

    /// Dates beyond what epoch milliseconds can hold are clamped, not trapped on; a date whose
    /// interval is not finite is stored as the epoch.
    func testTimestampsBeyondInt64AreClamped() throws {
        XCTAssertEqual(FlowRecord.milliseconds(Date(timeIntervalSince1970: 1e20)), .max)
        XCTAssertEqual(FlowRecord.milliseconds(Date(timeIntervalSince1970: -1e20)), .min)
        XCTAssertEqual(FlowRecord.milliseconds(Date(timeIntervalSince1970: .infinity)), 0)
        XCTAssertEqual(FlowRecord.milliseconds(Date(timeIntervalSince1970: .nan)), 0)
        XCTAssertEqual(FlowRecord.milliseconds(Date(timeIntervalSince1970: -1.5)), -1500)
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        flow.finishedAt = Date(timeIntervalSince1970: 1e30)
        let id = try XCTUnwrap(try repository.insert([flow]).first)
        let stored = try XCTUnwrap(try repository.flow(id: id)?.finishedAt)
        XCTAssertEqual(stored.timeIntervalSince1970, Double(Int64.max) / 1000, accuracy: 1)
    }

    /// `latestFlows` returns the newest first and no more than asked; `count` counts all.
    func testLatestFlowsOrderingLimitAndCount() throws {
        let repository = try makeRepository()
        XCTAssertEqual(try repository.count(), 0)
        XCTAssertEqual(try repository.latestFlows(limit: 5), [])
        let first = try repository.insert((0..<4).map { Samples.flow($0) })
        let second = try repository.insert((4..<7).map { Samples.flow($0) })
        let ids = first + second
        XCTAssertEqual(try repository.count(), 7)

        let latest = try repository.latestFlows(limit: 3)
        XCTAssertEqual(latest.map(\.id), ids.suffix(3).reversed().map { Optional($0) })
        XCTAssertEqual(latest.map(\.path), ["/item/6", "/item/5", "/item/4"])
        XCTAssertEqual(try repository.latestFlows(limit: 100).count, 7)
        XCTAssertEqual(try repository.latestFlows(limit: 0), [])
    }

    /// `flows(after:limit:)` pages forward in id order, for readers that follow the capture.
    func testFlowsAfterIdPagesForward() throws {
        let repository = try makeRepository()
        let ids = try repository.insert((0..<5).map { Samples.flow($0) })
        XCTAssertEqual(try repository.flows(after: ids[1], limit: 2).map(\.id), [ids[2], ids[3]])
        XCTAssertEqual(try repository.flows(after: ids[4], limit: 2), [])
        XCTAssertEqual(try repository.flows(after: 0, limit: 10).count, 5)
    }

    /// A missing id is nil, not an error.
    func testMissingFlowIsNil() throws {
        let repository = try makeRepository()
        XCTAssertNil(try repository.flow(id: 1))
        try repository.insert([Samples.flow(0)])
        XCTAssertNil(try repository.flow(id: 42))
    }

    /// Marking and unmarking a flow persists; an unknown id reports false.
    func testSetMarked() throws {
        let repository = try makeRepository()
        let id = try XCTUnwrap(try repository.insert([Samples.flow(0)]).first)
        XCTAssertTrue(try repository.setMarked(true, id: id))
        XCTAssertEqual(try repository.flow(id: id)?.marked, true)
        XCTAssertTrue(try repository.setMarked(false, id: id))
        XCTAssertEqual(try repository.flow(id: id)?.marked, false)
        XCTAssertFalse(try repository.setMarked(true, id: id + 1))
    }

    /// The writer connection is in WAL mode with synchronous=NORMAL (the documented durability).
    func testDatabaseUsesWALWithSynchronousNormal() throws {
        let repository = try makeRepository()
        let settings = try repository.writerConnectionSettings()
        XCTAssertEqual(settings.journalMode, "wal")
        XCTAssertEqual(settings.synchronous, 1)
        XCTAssertEqual(try repository.integrityCheck(), ["ok"])
    }

    /// Reopening an existing file keeps its flows (migrations do not run twice).
    func testReopeningKeepsFlows() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        do {
            let repository = TrafficRepository(database: try TrafficDatabase(path: path))
            try repository.insert([Samples.flow(0), Samples.flow(1)])
        }
        let reopened = TrafficRepository(database: try TrafficDatabase(path: path))
        XCTAssertEqual(try reopened.count(), 2)
        XCTAssertEqual(reopened.database.path, path)
    }
}
