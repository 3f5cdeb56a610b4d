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
