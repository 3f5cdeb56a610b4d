import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// The `v7-forwarded-messages` columns: a flow's origin side (the request as forwarded, the
/// response as the origin sent it) survives a write and a read, bodies small and large; flows
/// without one store NULL in all four columns; hand-written values never make a flow
/// unreadable; and a capture written before v7 is upgraded without losing its flows.
final class ForwardedMessagesColumnTests: XCTestCase {
    static let forwarded = ForwardedRequest(
        method: "POST", scheme: "https", host: "staging.test", port: 8443, path: "/v2/items?q=\"x\"",
        headers: [HeaderField(name: "Host", value: "staging.test:8443"), HeaderField(name: "X-Env", value: "stä\nging")],
        body: CapturedBody(bytes: Data("name=rewritten".utf8), size: 14))
    static let origin = OriginResponse(
        status: 500, reason: "Internal Server Error",
        headers: [HeaderField(name: "Content-Encoding", value: "gzip"), HeaderField(name: ":fake", value: "kept?")],
        body: CapturedBody(bytes: Data([0x1F, 0x8B, 0, 1]), size: 90_000, truncated: true))

    func testRoundTripBothSides() throws {
        let repository = try makeRepository()
        var both = Samples.fullHTTP
        both.forwardedRequest = Self.forwarded
        both.originResponse = Self.origin
        var headersOnly = Samples.flow(2)
        headersOnly.forwardedRequest = ForwardedRequest(method: "GET", scheme: "http", host: "a.test", port: 80, path: "/",
                                                        headers: [])
        headersOnly.originResponse = OriginResponse(status: 200, reason: nil, headers: [])
        let ids = try repository.insert([both, headersOnly, Samples.flow(3)])
        both.id = ids[0]
        headersOnly.id = ids[1]

        var expected = both
        // A header name starting with ":" cannot be told from a pseudo-field: it is not kept
        // (no HTTP/1 header can have one).
        expected.originResponse?.headers.removeLast()
        XCTAssertEqual(try repository.flow(id: ids[0]), expected)
        XCTAssertEqual(try repository.flow(id: ids[1]), headersOnly)
        XCTAssertNil(try repository.flow(id: ids[1])?.forwardedRequest?.body, "no body column: the client's body")
        XCTAssertFalse(try XCTUnwrap(repository.flow(id: ids[2])).hasOriginSide)
        let listed = try repository.listedFlows(ids: [ids[0]])
        XCTAssertEqual(listed.first?.forwardedRequest?.headers, Self.forwarded.headers, "list rows keep the heads")
        XCTAssertEqual(listed.first?.forwardedRequest?.body?.bytes, Data(), "but not the bodies")
    }

    /// A flow without an origin side stores NULL in every v7 column: no cost for it.
    func testNoOriginSideStoresNothing() throws {
        let repository = try makeRepository()
        let ids = try repository.insert([Samples.fullHTTP, Samples.tunnel])
        let nulls = try repository.database.pool.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM flows WHERE forwarded_request IS NULL AND origin_response IS NULL
                  AND forwarded_request_body IS NULL AND origin_response_body IS NULL
                """)
        }
        XCTAssertEqual(nulls, ids.count)
    }

    /// Bodies past the body-file threshold go to files like the client's own, all four of them.
    func testLargeBodiesRoundTrip() throws {
        let repository = try makeRepository()
        let big = Data((0..<(BodyFileStore.threshold + 12_345)).map { UInt8(truncatingIfNeeded: $0 * 7) })
        var flow = Samples.flow(1, bodyBytes: BodyFileStore.threshold * 2)
        flow.forwardedRequest = Self.forwarded
        flow.forwardedRequest?.body = CapturedBody(bytes: big, size: Int64(big.count))
        flow.originResponse = Self.origin
        flow.originResponse?.body = CapturedBody(bytes: Data(big.reversed()), size: Int64(big.count) * 3, truncated: true)
        let id = try XCTUnwrap(repository.insert([flow]).first)
        let read = try XCTUnwrap(repository.flow(id: id))
        XCTAssertEqual(read.forwardedRequest?.body?.bytes, big)
        XCTAssertEqual(read.originResponse?.body, flow.originResponse?.body)
        XCTAssertEqual(read.requestBody, flow.requestBody)
    }

    /// A body captured in blocks (`CapturedBody.append`) is written block by block and reads
    /// back as the same bytes.
    func testABodyCapturedInBlocksRoundTrips() throws {
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        let count = (1 << 20) + CapturedBody.blockSize / 2 + 3
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        var body = CapturedBody(size: Int64(count) + 9, truncated: true)
        for start in stride(from: 0, to: count, by: 10_007) {
            bytes[start..<min(start + 10_007, count)].withUnsafeBytes { body.append($0) }
        }
        XCTAssertGreaterThan(body.parts.count, 4)
        flow.responseBody = body
        let id = try XCTUnwrap(repository.insert([flow]).first)
        let read = try XCTUnwrap(repository.flow(id: id))
        XCTAssertEqual(read.responseBody.bytes, Data(bytes))
        XCTAssertEqual(read.responseBody.size, Int64(count) + 9)
        XCTAssertTrue(read.responseBody.truncated)
        XCTAssertEqual(read.responseBody, body)
    }

    /// Values the store did not write read as no origin side.
    func testHandWrittenValues() throws {
        let repository = try makeRepository()
        let values: [DatabaseValue] = [
            "not json".databaseValue, "[]".databaseValue, #"[[":method","GET"]]"#.databaseValue,
            #"[[":status","abc"]]"#.databaseValue, 42.databaseValue, Data([0xFF]).databaseValue,
        ]
        let ids = try repository.insert(values.map { _ in Samples.flow(1) })
        try repository.database.pool.write { db in
            for (id, value) in zip(ids, values) {
                try db.execute(sql: "UPDATE flows SET forwarded_request = ?, origin_response = ?, forwarded_request_body = ? WHERE id = ?",
                               arguments: [value, value, value, id])
            }
        }
        for id in ids {
            let flow = try XCTUnwrap(repository.flow(id: id))
            XCTAssertFalse(flow.hasOriginSide)
        }
    }

    func testVersion5DatabaseIsUpgraded() throws {
        let path = try makeOldCapture(in: try makeTemporaryDirectory(), upTo: "v5-pin-changes")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        var new = Samples.flow(2)
        new.forwardedRequest = Self.forwarded
        try repository.insert([new])
        let flows = try repository.latestFlows(limit: 2)
        XCTAssertEqual(flows.map { $0.forwardedRequest?.host }, ["staging.test", nil])
        XCTAssertEqual(flows.last?.url, "http://old.test/before")
    }
}
