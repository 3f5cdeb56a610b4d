import XCTest
@testable import Rules

final class PathGlobTests: XCTestCase {
    /// `*` crosses slashes, `?` is one character, and the whole path must match.
    func testGlobSemantics() {
        XCTAssertTrue(PathGlob("/api/*").matches("/api/users/1"))
        XCTAssertTrue(PathGlob("/api/*").matches("/api/"))
        XCTAssertFalse(PathGlob("/api/*").matches("/api"))
        XCTAssertTrue(PathGlob("*.json").matches("/a/b/c.json"))
        XCTAssertFalse(PathGlob("*.json").matches("/a/b/c.json5"))
        XCTAssertTrue(PathGlob("/v?/x").matches("/v2/x"))
        XCTAssertFalse(PathGlob("/v?/x").matches("/v10/x"))
        XCTAssertFalse(PathGlob("/API/*").matches("/api/x"), "paths are case-sensitive")
        XCTAssertTrue(PathGlob("/exact").matches("/exact"))
        XCTAssertFalse(PathGlob("/exact").matches("/exact/more"))
    }

    /// A `literal*` pattern knows its prefix and what the star matched; other patterns do not.
    func testRemainder() {
        XCTAssertEqual(PathGlob("/api/*").remainder(of: "/api/users/1"), "users/1")
        XCTAssertNil(PathGlob("/api/*.json").remainder(of: "/api/a.json"))
        XCTAssertNil(PathGlob("/a?/*").remainder(of: "/ab/c"))
        XCTAssertNil(PathGlob("/api/*").remainder(of: "/other"))
    }
}
