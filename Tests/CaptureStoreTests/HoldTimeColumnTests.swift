import CaptureTestSupport
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

final class HoldTimeColumnTests: XCTestCase {
    /// `v11-hold-time`: the time held at a breakpoint survives a write and a read (list rows
    /// included); flows never held read -1, as do rows of a capture written before v11.
    func testHoldTimeRoundTripAndUpgrade() throws {
        let repository = try makeRepository()
        var held = Samples.fullHTTP
        held.timings.hold = 1_234.5
        let ids = try repository.insert([held, Samples.flow(2)])
        XCTAssertEqual(try repository.flow(id: ids[0])?.timings.hold, 1_234.5)
        XCTAssertEqual(try repository.listedFlows(ids: ids).map(\.timings.hold), [1_234.5, -1])

        let path = try makeOldCapture(in: try makeTemporaryDirectory(), upTo: "v10-replay-of")
        let upgraded = TrafficRepository(database: try TrafficDatabase(path: path))
        try upgraded.insert([held])
        XCTAssertEqual(try upgraded.latestFlows(limit: 2).map(\.timings.hold), [1_234.5, -1])
    }
}
