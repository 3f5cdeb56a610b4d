import NIOCore
import XCTest

@testable import ProxyEngine

/// `HeldBody.prefix`: the first bytes across part boundaries, never more than held; what the
/// flow keeps of an origin body a rewrite changed without copying the whole body.
final class HeldBodyTests: XCTestCase {
    func testPrefixAcrossParts() {
        var held = HeldBody(limit: 100)
        for text in ["abc", "", "def", "g"] { XCTAssertTrue(held.append(ByteBuffer(string: text))) }
        XCTAssertEqual(held.prefix(0), [])
        XCTAssertEqual(held.prefix(2), Array("ab".utf8))
        XCTAssertEqual(held.prefix(4), Array("abcd".utf8))
        XCTAssertEqual(held.prefix(7), Array("abcdefg".utf8))
        XCTAssertEqual(held.prefix(1 << 30), held.bytes)
        XCTAssertEqual(HeldBody(limit: 1).prefix(10), [])
    }
}
