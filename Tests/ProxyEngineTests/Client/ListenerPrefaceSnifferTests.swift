import XCTest
@testable import ProxyEngine

/// The listener's first bytes: the whole HTTP/2 preface is h2c, any byte off it is HTTP/1 at once
/// (every HTTP/1 method differs by its second byte at the latest), a prefix waits.
final class ListenerPrefaceSnifferTests: XCTestCase {
    func testMatch() {
        let preface = ListenerPrefaceSniffer.preface
        XCTAssertEqual(ListenerPrefaceSniffer.match(preface), .http2)
        XCTAssertEqual(ListenerPrefaceSniffer.match(preface + Array("more frames".utf8)), .http2)
        XCTAssertEqual(ListenerPrefaceSniffer.match(Array(preface.prefix(10))), .undecided)
        XCTAssertEqual(ListenerPrefaceSniffer.match([UInt8]()), .undecided)
        for request in ["GET / HTTP/1.1", "POST /", "PUT /", "PATCH /", "CONNECT a:443", "PRISM / HTTP/1.1\r\n\r\n"] {
            XCTAssertEqual(ListenerPrefaceSniffer.match(Array(request.utf8)), .http1, request)
        }
        XCTAssertEqual(ListenerPrefaceSniffer.match(Array("P".utf8)), .undecided)
        XCTAssertEqual(ListenerPrefaceSniffer.match(Array("PO".utf8)), .http1)
    }
}
