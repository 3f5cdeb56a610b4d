import XCTest
@testable import ProxyEngine

/// The listener's first bytes: the whole HTTP/2 preface is h2c, any byte off it is HTTP/1 at once
/// (every HTTP/1 method differs by its second byte at the latest), a prefix waits; SOCKS5 and
/// SOCKS4 by their first byte.
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

    /// SOCKS is told by its version byte alone, before any HTTP method could start.
    func testSOCKSByVersionByte() {
        XCTAssertEqual(ListenerPrefaceSniffer.match([0x05]), .socks5)
        XCTAssertEqual(ListenerPrefaceSniffer.match([0x05, 0x01, 0x00]), .socks5)
        XCTAssertEqual(ListenerPrefaceSniffer.match([0x04, 0x01, 0x00, 0x50]), .socks4)
        XCTAssertEqual(ListenerPrefaceSniffer.match([0x06]), .http1, "other control bytes go to the HTTP/1 parser, which refuses them")
    }
}
