import LinearRegex
@testable import Rules
import RulesTestSupport
import XCTest

/// Which file a map_local rule answers with, and the request paths it refuses.
final class LocalFileLookupTests: XCTestCase {
    private let leaves = LocalFileLookup.Result.refused("the path leaves the map_local directory")
    private let badEscape = LocalFileLookup.Result.refused("the path has invalid percent-encoding")

    private func lookup(_ source: MapLocalAction.Source, _ path: String, _ condition: PathCondition? = nil) -> LocalFileLookup.Result {
        LocalFileLookup.file(for: MapLocalAction(source: source), request: RulesTestSupport.request("http://a.com" + path),
                             condition: condition)
    }

    private func dir(_ path: String, _ condition: PathCondition? = nil) -> LocalFileLookup.Result {
        lookup(.directory("/srv/web"), path, condition)
    }

    private func glob(_ pattern: String) -> PathCondition { .glob(PathGlob(pattern)) }

    /// A file source answers every request with its file, whatever the path.
    func testFileSource() {
        XCTAssertEqual(lookup(.file("/m/user.json"), "/anything/../at/all?x=1"), .file("/m/user.json"))
    }

    /// Without a `literal*` rule path the whole request path is appended; the query is not.
    func testDirectoryWithWholePath() {
        XCTAssertEqual(dir("/a/b.js?v=1"), .file("/srv/web/a/b.js"))
        XCTAssertEqual(lookup(.directory("/srv/web/"), "/a/b.js"), .file("/srv/web/a/b.js"))
        XCTAssertEqual(dir("//a//./b.js"), .file("/srv/web/a/b.js"))
        XCTAssertEqual(dir("/static/a.css", glob("*.css")), .file("/srv/web/static/a.css"))
        XCTAssertEqual(dir("/static/a.css", .regex(try! LinearRegex("css"))),
                       .file("/srv/web/static/a.css"))
    }

    /// With a `literal*` rule path only what the star matched is appended.
    func testDirectoryWithGlobRemainder() {
        XCTAssertEqual(dir("/static/css/x.css", glob("/static/*")), .file("/srv/web/css/x.css"))
        XCTAssertEqual(dir("/static-v2/x.css", glob("/static*")), .file("/srv/web/-v2/x.css"))
        XCTAssertEqual(dir("/static/", glob("/static/*")), .file("/srv/web/index.html"))
    }

    /// A path ending in `/` (or nothing left) gets index.html.
    func testTrailingSlashGetsIndex() {
        XCTAssertEqual(dir("/"), .file("/srv/web/index.html"))
        XCTAssertEqual(dir("/docs/"), .file("/srv/web/docs/index.html"))
        XCTAssertEqual(dir("/docs%2F"), .file("/srv/web/docs/index.html"))
        XCTAssertEqual(dir("/docs"), .file("/srv/web/docs"))
    }

    /// Percent escapes are decoded (`+` stays); a decoded `/` separates components.
    func testPercentDecoding() {
        XCTAssertEqual(dir("/a%20b.txt"), .file("/srv/web/a b.txt"))
        XCTAssertEqual(dir("/a+b.txt"), .file("/srv/web/a+b.txt"))
        XCTAssertEqual(dir("/%C3%A9t%c3%a9.txt"), .file("/srv/web/été.txt"))
        XCTAssertEqual(dir("/a%2Fb"), .file("/srv/web/a/b"))
        XCTAssertEqual(dir("/...."), .file("/srv/web/...."))
    }

    /// `..` is refused as written and percent-encoded, anywhere in the path.
    func testDotDotIsRefused() {
        XCTAssertEqual(dir("/../etc/passwd"), leaves)
        XCTAssertEqual(dir("/a/../../etc/passwd"), leaves)
        XCTAssertEqual(dir("/a/.."), leaves)
        XCTAssertEqual(dir("/%2e%2e/etc/passwd"), leaves)
        XCTAssertEqual(dir("/%2E%2E%2Fetc"), leaves)
        XCTAssertEqual(dir("/static/../x", glob("/static/*")), leaves)
    }

    /// Bad escapes and escapes that are not UTF-8 are refused.
    func testBadEscapesAreRefused() {
        XCTAssertEqual(dir("/a%2"), badEscape)
        XCTAssertEqual(dir("/a%"), badEscape)
        XCTAssertEqual(dir("/a%zz"), badEscape)
        XCTAssertEqual(dir("/%ff.txt"), badEscape)
    }

    /// Backslashes and NUL bytes are refused, raw or encoded.
    func testBackslashAndNULAreRefused() {
        XCTAssertEqual(dir("/a\\..\\b"), leaves)
        XCTAssertEqual(dir("/a%5Cb"), leaves)
        XCTAssertEqual(dir("/a%00.txt"), leaves)
    }

    /// `..` is found by bytes: a combining mark after the `/` that follows it (one Character
    /// with the slash) does not hide it.
    func testDotDotBeforeACombiningMarkIsRefused() {
        XCTAssertEqual(dir("/..%2F%CC%81x"), leaves)
        XCTAssertEqual(dir("/a/..%2F%CC%81"), leaves)
        XCTAssertEqual(dir("/caf%C3%A9/%CC%81.txt"), .file("/srv/web/café/\u{301}.txt"))
    }
}
