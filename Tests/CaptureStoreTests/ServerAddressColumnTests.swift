import CaptureTestSupport
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// The `v3-server-address` column: the origin's IP address survives a write and a read, and a
/// flow without one reads back without one.
final class ServerAddressColumnTests: XCTestCase {
    func testServerAddressRoundTrip() throws {
        let repository = try makeRepository()
        var v4 = Samples.flow(1)
        v4.serverAddress = "127.0.0.1"
        var v6 = Samples.flow(2)
        v6.serverAddress = "::1"
        let none = Samples.flow(3)
        let ids = try repository.insert([v4, v6, none])
        XCTAssertEqual(try repository.flow(id: ids[0])?.serverAddress, "127.0.0.1")
        XCTAssertEqual(try repository.flow(id: ids[1])?.serverAddress, "::1")
        XCTAssertNil(try repository.flow(id: ids[2])?.serverAddress)
        v4.id = ids[0]
        XCTAssertEqual(try repository.flow(id: ids[0]), v4)
    }
}
