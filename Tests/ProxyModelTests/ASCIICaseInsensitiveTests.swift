import ProxyModel
import XCTest

/// `equalsIgnoringASCIICase`, `asciiLowercased` and the header lookup built on them.
final class ASCIICaseInsensitiveTests: XCTestCase {
    func testEqualityIgnoresOnlyASCIICase() {
        XCTAssertTrue("Content-Length".equalsIgnoringASCIICase("content-length"))
        XCTAssertTrue("".equalsIgnoringASCIICase(""))
        XCTAssertFalse("Content-Length".equalsIgnoringASCIICase("Content-Lengt"))
        // Bytes that differ only in bit 0x20 but are not letters must not match ('@' vs '`', '[' vs '{').
        XCTAssertFalse("@".equalsIgnoringASCIICase("`"))
        XCTAssertFalse("[".equalsIgnoringASCIICase("{"))
        XCTAssertFalse("É".equalsIgnoringASCIICase("é"), "non-ASCII letters are compared as bytes")
        XCTAssertEqual("X-Foo".asciiLowercased, "x-foo")
        XCTAssertEqual("x-foo".asciiLowercased, "x-foo")
    }

    func testFirstNamedHeader() {
        let headers = [HeaderField(name: "Set-Cookie", value: "a=1"), HeaderField(name: "set-cookie", value: "b=2"),
                       HeaderField(name: "Content-Type", value: "text/plain")]
        XCTAssertEqual(headers.first(named: "SET-COOKIE"), "a=1")
        XCTAssertEqual(headers.first(named: "content-type"), "text/plain")
        XCTAssertNil(headers.first(named: "Content-Typ"))
    }
}
