@testable import FlowExport
import Foundation
import XCTest

/// Cookie headers and Set-Cookie attributes, as HAR lists them.
final class HARCookieTests: XCTestCase {
    func testRequestCookies() {
        let cookies = HARCookie.requestCookies(" a=1;b = x=y ;; lonely ")
        XCTAssertEqual(cookies.map(\.name), ["a", "b", ""])
        XCTAssertEqual(cookies.map(\.value), ["1", "x=y", "lonely"])
    }

    /// Some exporters fold several cookies into one value, one per line: each is its own cookie,
    /// so no attribute swallows the next cookie (and a redacted export leaks none of them).
    func testCookiesFoldedOnSeparateLines() {
        let received = Date(timeIntervalSince1970: 1_000_000)
        let cookies = HARCookie.responseCookies("sid=a; Path=/\nremember=r1; HttpOnly\r\nlast=z", received: received)
        XCTAssertEqual(cookies.map(\.name), ["sid", "remember", "last"])
        XCTAssertEqual(cookies.map(\.value), ["a", "r1", "z"])
        XCTAssertEqual(cookies.map(\.path), ["/", nil, nil])
        XCTAssertEqual(cookies.map(\.httpOnly), [false, true, false])
        let sent = HARCookie.requestCookies("a=1\nb=2; c=3")
        XCTAssertEqual(sent.map(\.name), ["a", "b", "c"])
        XCTAssertEqual(sent.map(\.value), ["1", "2", "3"])
    }

    func testSetCookieAttributes() throws {
        let received = Date(timeIntervalSince1970: 1_000_000)
        let cookie = try XCTUnwrap(HARCookie.responseCookie(
            "id=a3f; Expires=Thu, 01 Jan 2037 00:00:00 GMT; Max-Age=60; path=/p; secure; SameSite=Strict; Unknown=1",
            received: received))
        XCTAssertEqual(cookie.name, "id")
        XCTAssertEqual(cookie.value, "a3f")
        XCTAssertEqual(cookie.path, "/p")
        XCTAssertNil(cookie.domain)
        XCTAssertEqual(cookie.expires, received.addingTimeInterval(60), "Max-Age wins over Expires")
        XCTAssertTrue(cookie.secure)
        XCTAssertFalse(cookie.httpOnly)
        XCTAssertEqual(cookie.sameSite, "Strict")
        XCTAssertNil(HARCookie.responseCookie("  ", received: received))
    }

    func testHTTPDateFormats() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06 08:49:37 UTC
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            XCTAssertEqual(HTTPDateParser.parse(text), expected, text)
        }
        XCTAssertNil(HTTPDateParser.parse("tomorrow"))
        XCTAssertNil(HTTPDateParser.parse("Sun, 06 Nov 1994 25:49:37 GMT"))
    }
}
