import LinearRegex
@testable import Rules
import RulesTestSupport
import XCTest

/// `RemoteDestination`: parsing `to:` and the path and query a mapped request is sent to.
final class RemoteDestinationTests: XCTestCase {
    private func destination(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> RemoteDestination? {
        do {
            return try RemoteDestination(parsing: text)
        } catch {
            XCTFail("'\(text)' refused: \(error.message)", file: file, line: line)
            return nil
        }
    }

    // MARK: - Parsing

    /// Schemes are http or https (any case) with their default ports; hosts are normalized.
    func testSchemesAndDefaultPorts() {
        XCTAssertEqual(destination("http://a.com"), RemoteDestination(scheme: "http", host: "a.com", port: 80))
        XCTAssertEqual(destination("HTTPS://A.Example.COM."), RemoteDestination(scheme: "https", host: "a.example.com", port: 443))
        XCTAssertEqual(destination("http://a.com:8080/x"),
                       RemoteDestination(scheme: "http", host: "a.com", port: 8080, path: "/x"))
        XCTAssertEqual(destination("https://127.0.0.1:443/"),
                       RemoteDestination(scheme: "https", host: "127.0.0.1", port: 443, path: "/"))
    }

    /// IPv6 addresses are bracketed in the URL and kept without brackets.
    func testIPv6() {
        XCTAssertEqual(destination("http://[::1]:3000/api"),
                       RemoteDestination(scheme: "http", host: "::1", port: 3000, path: "/api"))
        XCTAssertEqual(destination("https://[2001:DB8:0::1]"),
                       RemoteDestination(scheme: "https", host: "2001:db8::1", port: 443))
    }

    /// A query is split from the path; it may come without a path, or be empty.
    func testQuery() {
        XCTAssertEqual(destination("http://a.com/v2?debug=1&x=2"),
                       RemoteDestination(scheme: "http", host: "a.com", port: 80, path: "/v2", query: "debug=1&x=2"))
        XCTAssertEqual(destination("http://a.com?debug=1"),
                       RemoteDestination(scheme: "http", host: "a.com", port: 80, path: nil, query: "debug=1"))
        XCTAssertEqual(destination("http://a.com/v2?"),
                       RemoteDestination(scheme: "http", host: "a.com", port: 80, path: "/v2", query: ""))
    }

    /// A bad port is refused with the port as written; the error's description is its message.
    func testPortErrors() {
        for (text, port) in [("http://a.com:0", "0"), ("http://a.com:65536", "65536"), ("http://a.com:x/", "x"),
                             ("http://[::1]:", "")] {
            XCTAssertThrowsError(try RemoteDestination(parsing: text), text) { error in
                let error = error as! RuleValueError
                XCTAssertEqual(error.message, "'\(text)': the port must be a number from 1 to 65535, not '\(port)'")
                XCTAssertEqual(error.description, error.message)
            }
        }
    }

    /// The authority leaves default ports out and brackets IPv6; the URL reads as written.
    func testAuthorityAndURL() {
        XCTAssertEqual(destination("http://a.com:80/x")?.authority, "a.com")
        XCTAssertEqual(destination("http://a.com:443/x")?.authority, "a.com:443")
        XCTAssertEqual(destination("https://a.com:443")?.authority, "a.com")
        XCTAssertEqual(destination("https://[::1]:8443")?.authority, "[::1]:8443")
        XCTAssertEqual(destination("https://[::1]")?.authority, "[::1]")
        XCTAssertEqual(destination("HTTP://A.com:80/v2?x=1")?.url, "http://a.com/v2?x=1")
        XCTAssertEqual(destination("http://[::1]:3000")?.url, "http://[::1]:3000")
    }

    // MARK: - Path and query

    private func target(_ to: String, _ condition: PathCondition?, _ request: String) -> String? {
        destination(to)?.pathAndQuery(for: RulesTestSupport.request("http://origin" + request), matchedBy: condition)
    }

    private func glob(_ pattern: String) -> PathCondition { .glob(PathGlob(pattern)) }

    /// Without a destination path the request keeps its path and query, whatever the rule's path.
    func testNoDestinationPath() {
        XCTAssertEqual(target("http://x", nil, "/users/1?page=2"), "/users/1?page=2")
        XCTAssertEqual(target("http://x", glob("/users/*"), "/users/1?page=2"), "/users/1?page=2")
        // A query without a path replaces the request's query, as it does with a path.
        XCTAssertEqual(target("http://x?debug=1", nil, "/users/1?page=2"), "/users/1?debug=1")
        XCTAssertEqual(target("http://x?debug=1", nil, "/users/1"), "/users/1?debug=1")
    }

    /// A destination path with no path condition is a prefix: exactly one slash where they meet.
    func testDestinationPathIsAPrefix() {
        XCTAssertEqual(target("http://x/v2", nil, "/users/1?page=2"), "/v2/users/1?page=2")
        XCTAssertEqual(target("http://x/v2/", nil, "/users/1"), "/v2/users/1")
        XCTAssertEqual(target("http://x/", nil, "/users/1"), "/users/1")
        XCTAssertEqual(target("http://x/v2", nil, "/"), "/v2/")
    }

    /// A `literal*` rule path appends what the star matched, with or without slashes on either side.
    func testGlobRemainderIsAppended() {
        XCTAssertEqual(target("http://x/v2", glob("/api/*"), "/api/users/1?q=1"), "/v2/users/1?q=1")
        XCTAssertEqual(target("http://x/v2/", glob("/api/*"), "/api/users/1"), "/v2/users/1")
        XCTAssertEqual(target("http://x/v2", glob("/api*"), "/api/users"), "/v2/users")
        XCTAssertEqual(target("http://x/v2/", glob("/api*"), "/api/users"), "/v2/users")
        XCTAssertEqual(target("http://x/v2", glob("/api*"), "/apiv1"), "/v2/v1")
        XCTAssertEqual(target("http://x/v2", glob("/api/*"), "/api/?q=1"), "/v2?q=1")
    }

    /// An exact path, another glob or a regex sends every matched request to exactly the destination path.
    func testOtherConditionsUseTheDestinationPath() {
        XCTAssertEqual(target("http://x/v2/me", glob("/users/1"), "/users/1?page=2"), "/v2/me?page=2")
        XCTAssertEqual(target("http://x/data.json", glob("*.json"), "/a/b.json"), "/data.json")
        XCTAssertEqual(target("http://x/v2/", glob("/a?/*"), "/ab/c"), "/v2/")
        XCTAssertEqual(target("http://x/new", .regex(try! LinearRegex("^/old")),
                              "/old/path?x=1"), "/new?x=1")
    }

    /// A destination query replaces the request's; otherwise the request's is kept.
    func testQueryKeptOrReplaced() {
        XCTAssertEqual(target("http://x/v2?debug=1", nil, "/users?page=2"), "/v2/users?debug=1")
        XCTAssertEqual(target("http://x/v2?debug=1", nil, "/users"), "/v2/users?debug=1")
        XCTAssertEqual(target("http://x/v2?", nil, "/users?page=2"), "/v2/users?")
        XCTAssertEqual(target("http://x/v2", nil, "/users"), "/v2/users")
        XCTAssertEqual(target("http://x/v2", nil, "/users?"), "/v2/users?")
    }
}
