import CaptureTestSupport
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// `flowIDs(after:)` and `listedFlows(ids:)`: the reads a list view over a large capture makes.
final class ListingTests: XCTestCase {
    func testIDsAndBodylessFlowsInTheOrderAsked() throws {
        let repository = try makeRepository()
        var flows = (0..<5).map { Samples.flow($0, bodyBytes: 100 * ($0 + 1)) }
        flows[2].tls = TLSDetails(alpn: "h2")
        flows[3].serverAddress = "::1"
        let ids = try repository.insert(flows)
        try repository.delete(ids: [ids[1]])
        XCTAssertEqual(try repository.flowIDs(), [ids[0], ids[2], ids[3], ids[4]])
        XCTAssertEqual(try repository.flowIDs(after: ids[2]), [ids[3], ids[4]])

        let asked = [ids[4], ids[1], ids[0], ids[3], ids[2]]
        let listed = try repository.listedFlows(ids: asked)
        XCTAssertEqual(listed.compactMap(\.id), [ids[4], ids[0], ids[3], ids[2]], "a deleted id is left out")
        for flow in listed {
            var expected = try XCTUnwrap(try repository.flow(id: XCTUnwrap(flow.id)))
            XCTAssertGreaterThan(expected.responseBody.bytes.count, 0, "the sample has a body to leave out")
            expected.requestBody.bytes = Data()
            expected.responseBody.bytes = Data()
            XCTAssertEqual(flow, expected)
        }
        XCTAssertEqual(try repository.listedFlows(ids: []), [])
    }

    /// More ids than one IN list holds are fetched in chunks.
    func testManyIDs() throws {
        let repository = try makeRepository()
        let ids = try repository.insert((0..<1_200).map { Samples.flow($0) })
        XCTAssertEqual(try repository.listedFlows(ids: ids.reversed()).compactMap(\.id), ids.reversed())
    }
}
