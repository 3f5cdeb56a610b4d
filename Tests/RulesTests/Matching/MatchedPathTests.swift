@testable import Rules
import RulesFile
import XCTest

/// Paths as rules match them: every spelling an origin reads as the same path is the same path,
/// so a `block` on `/admin*` cannot be passed by writing `/admin` differently.
final class MatchedPathTests: XCTestCase {
    func testSpellingsOfOnePathAreOne() {
        let cases: [(String, String)] = [
            ("/admin", "/admin"), ("/%61dmin", "/admin"), ("/%61%64%6D%69%6e/x", "/admin/x"),
            ("/./admin", "/admin"), ("//admin", "/admin"), ("///admin//x", "/admin/x"),
            ("/x/../admin", "/admin"), ("/x/%2e%2e/admin", "/admin"), ("/x/.%2E/admin", "/admin"),
            ("/../../admin", "/admin"), ("/admin/.", "/admin/"), ("/admin/x/..", "/admin/"),
            ("/admin/", "/admin/"), ("/", "/"), ("/..", "/"), ("//", "/"), ("/%7Euser", "/~user"),
        ]
        for (sent, matched) in cases {
            XCTAssertEqual(String(MatchedPath.normalized(sent[...])), matched, sent)
        }
    }

    /// What an origin does not read as another character stays: an encoded `/`, `%`, `?` or a
    /// non-ASCII byte, broken escapes, case, `;` parameters, and anything not starting with `/`.
    func testOtherBytesStayAsSent() {
        for sent in ["/a%2Fb", "/a%25", "/a%3F", "/%C3%A9", "/a%zz", "/a%6", "/ADMIN", "/admin;x", "*", "/a.b/..c/.d"] {
            XCTAssertEqual(String(MatchedPath.normalized(sent[...])), sent, sent)
        }
    }

    /// Block rules see the normalized path (glob and regex alike); the request keeps its own.
    func testRulesMatchTheNormalizedPath() throws {
        let rules = try RulesFile.parse("""
            rules:
              - name: no admin
                match: { host: "*", path: "/admin*" }
                block: {}
              - name: no secret
                match: { host: "*", path_regex: "^/secret(/|$)" }
                block: {}
            """, file: "rules.yml", baseDirectory: "/")
        for path in ["/%61dmin", "/./admin", "//admin/x", "/x/../admin", "/%73ecret/?q=1", "//secret"] {
            let facts = RequestFacts(scheme: "http", host: "a.test", port: 80, method: "GET", pathAndQuery: path)
            XCTAssertNotNil(rules.plan(for: facts).block, path)
            XCTAssertEqual(facts.pathAndQuery, path)
        }
        let other = RequestFacts(scheme: "http", host: "a.test", port: 80, method: "GET", pathAndQuery: "/administrator%2F..")
        XCTAssertNotNil(rules.plan(for: other).block, "still under /admin*")
        let allowed = RequestFacts(scheme: "http", host: "a.test", port: 80, method: "GET", pathAndQuery: "/ADMIN")
        XCTAssertNil(rules.plan(for: allowed).block)
    }
}
