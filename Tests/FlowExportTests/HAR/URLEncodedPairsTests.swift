@testable import FlowExport
import XCTest

/// Query strings and form bodies split and decode as browsers do.
final class URLEncodedPairsTests: XCTestCase {
    func testSplitsAndDecodes() {
        let pairs = URLEncodedPairs("a=1&&b=x%3Dy+z&c&%E2%82%AC=%zz&d=%C3")
        XCTAssertEqual(pairs.decoded.map(\.name), ["a", "b", "c", "€", "d"])
        XCTAssertEqual(pairs.decoded.map(\.value), ["1", "x=y z", "", "%zz", "\u{FFFD}"])
    }

    func testQueryOfPath() {
        XCTAssertEqual(URLEncodedPairs.query(ofPath: "/p?a=1#frag"), "a=1")
        XCTAssertEqual(URLEncodedPairs.query(ofPath: "/p?"), "")
        XCTAssertNil(URLEncodedPairs.query(ofPath: "/p#a?b"))
    }

    func testRewriteKeepsOtherPiecesAsWritten() {
        let pairs = URLEncodedPairs("a=%41&b=2&c")
        XCTAssertEqual(pairs.rewritten { $0.name == "b" ? "X" : nil }, "a=%41&b=X&c")
        XCTAssertEqual(pairs.rewritten { $0.name == "c" ? "X" : nil }, "a=%41&b=2&c=X")
    }
}
