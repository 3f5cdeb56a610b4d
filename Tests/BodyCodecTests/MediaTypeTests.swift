import BodyCodec
import XCTest

/// `MediaType`: the essence of a `Content-Type` (parameters, spaces and case dropped), and which
/// types are text, as the viewer, rewrites and the full-text index ask it.
final class MediaTypeTests: XCTestCase {
    func testEssence() {
        XCTAssertEqual(MediaType("application/json; charset=utf-8").essence, "application/json")
        XCTAssertEqual(MediaType(" \tText/HTML ;charset=UTF-8").essence, "text/html")
        XCTAssertEqual(MediaType("image/png").essence, "image/png")
        XCTAssertEqual(MediaType("").essence, "")
        XCTAssertEqual(MediaType(";").essence, "")
        XCTAssertEqual(MediaType("  ").essence, "")
        XCTAssertEqual(MediaType("APPLICATION/VND.API+JSON").essence, "application/vnd.api+json")
        XCTAssertEqual(MediaType("téxt/plain").essence, "téxt/plain")
    }

    func testTextualTypes() {
        for type in ["text/plain", "TEXT/CSV; x=1", "application/json", "application/problem+json", "application/xml",
                     "image/svg+xml", "application/javascript", "text/ecmascript", "application/x-www-form-urlencoded"] {
            XCTAssertTrue(MediaType(type).isTextual, type)
        }
        for type in ["image/png", "application/octet-stream", "multipart/form-data", "", "js", "application/x-www-form"] {
            XCTAssertFalse(MediaType(type).isTextual, type)
        }
        XCTAssertTrue(MediaType("Application/X-WWW-Form-Urlencoded").isURLEncodedForm)
    }
}
