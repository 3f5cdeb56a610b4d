import Foundation
import XCTest

@testable import ProxyModel

/// The rare parts of a flow behind a pointer: the same value semantics as the optionals they
/// replaced (equality, hashing, copies that do not share changes), at a pointer's size.
final class OutOfLineTests: XCTestCase {
    private let changed = OriginResponse(status: 418, reason: "Teapot", headers: [HeaderField(name: "X-A", value: "1")])

    func testARarePartCostsAPointerWhereItsOptionalCostItsSize() {
        XCTAssertEqual(MemoryLayout<OutOfLine<OriginResponse>>.size, MemoryLayout<Int>.size)
        XCTAssertEqual(MemoryLayout<OutOfLine<ForwardedRequest>>.size, MemoryLayout<Int>.size)
        XCTAssertGreaterThan(MemoryLayout<OriginResponse?>.size + MemoryLayout<ForwardedRequest?>.size, 200)
    }

    func testFlowsWithTheSamePartsAreEqualAndHashAlike() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var first = Flow(startedAt: start, host: "a.test")
        var second = Flow(startedAt: start, host: "a.test")
        XCTAssertEqual(first, second)
        first.originResponse = changed
        XCTAssertNotEqual(first, second, "a part on one side only")
        second.originResponse = OriginResponse(status: 418, reason: "Teapot", headers: [HeaderField(name: "X-A", value: "1")])
        XCTAssertEqual(first, second, "equal parts in different boxes")
        XCTAssertEqual(first.hashValue, second.hashValue)
        second.originResponse?.status = 200
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(Set([first, second]).count, 2)
    }

    func testACopyDoesNotSeeLaterChanges() {
        var original = Flow(forwardedRequest: ForwardedRequest(method: "GET", scheme: "https", host: "b.test", port: 443,
                                                               path: "/", headers: []))
        let copy = original
        original.forwardedRequest?.path = "/changed"
        original.originResponse = changed
        XCTAssertEqual(copy.forwardedRequest?.path, "/")
        XCTAssertNil(copy.originResponse)
        XCTAssertEqual(original.forwardedRequest?.path, "/changed")
        original.forwardedRequest = nil
        XCTAssertNil(original.forwardedRequest)
        XCTAssertEqual(copy.forwardedRequest?.host, "b.test")
    }
}
