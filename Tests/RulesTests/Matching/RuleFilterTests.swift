import ProxyCore
import XCTest
@testable import Rules

/// The numbers-only prefilter: it may let through rules that do not match (the full check
/// follows), but must never turn away one that does.
final class RuleFilterTests: XCTestCase {
    private func request(_ method: String = "GET", _ scheme: String = "http", _ host: String = "api.example.com",
                         _ port: Int = 80, _ path: String = "/v1/users?x=1") -> RequestFacts {
        RequestFacts(scheme: scheme, host: host, port: port, method: method, pathAndQuery: path)
    }

    private func filter(hosts: [String] = ["*"], port: Int? = nil, schemes: Set<String>? = nil,
                        methods: Set<String>? = nil, path: String? = nil) throws -> RuleFilter {
        RuleFilter(RuleMatch(hosts: try HostPatternList(parsing: hosts), port: port, schemes: schemes, methods: methods,
                             path: path.map { .glob(PathGlob($0)) }))
    }

    /// Packed prefixes compare the first bytes only, up to eight, of texts of any length.
    func testPackedPrefix() {
        func packed(_ text: String) -> PackedPrefix { PackedPrefix(of: text[...]) }
        XCTAssertTrue(PackedPrefix(literalStartOf: Array("/v1/*".utf8)).isPrefix(of: packed("/v1/users")))
        XCTAssertFalse(PackedPrefix(literalStartOf: Array("/v2/*".utf8)).isPrefix(of: packed("/v1/users")))
        XCTAssertTrue(PackedPrefix(literalStartOf: Array("/a?c".utf8)).isPrefix(of: packed("/abc")), "stops at ?")
        XCTAssertTrue(PackedPrefix(literalStartOf: Array("/0123456789/*".utf8)).isPrefix(of: packed("/0123456789/x")))
        XCTAssertFalse(PackedPrefix(literalStartOf: Array("/0123456/*".utf8)).isPrefix(of: packed("/0123")), "longer than the text")
        XCTAssertTrue(PackedPrefix(literalStartOf: Array("*.json".utf8)).isPrefix(of: packed("/x.json")), "no literal start")
        XCTAssertTrue(PackedPrefix().isPrefix(of: packed("")))
    }

    /// Port, scheme, method (named or not), path start and host glob ends admit what matches.
    func testAdmits() throws {
        XCTAssertTrue(try filter().admits(request()))
        XCTAssertFalse(try filter(port: 8080).admits(request()))
        XCTAssertTrue(try filter(port: 80).admits(request()))
        XCTAssertFalse(try filter(schemes: ["https"]).admits(request()))
        XCTAssertTrue(try filter(schemes: ["http", "https"]).admits(request()))
        XCTAssertFalse(try filter(methods: ["POST"]).admits(request()))
        XCTAssertTrue(try filter(methods: ["POST", "GET"]).admits(request()))
        XCTAssertTrue(try filter(methods: ["PURGE"]).admits(request("PURGE")), "named methods pass on to the full check")
        XCTAssertFalse(try filter(methods: ["PURGE"]).admits(request("GET")))
        XCTAssertFalse(try filter(methods: ["GET"]).admits(request("PURGE")))
        XCTAssertTrue(try filter(path: "/v1/*").admits(request()))
        XCTAssertFalse(try filter(path: "/v2/*").admits(request()))
        XCTAssertTrue(try filter(hosts: ["api-*.example.com"]).admits(request(host: "api-1.example.com")))
        XCTAssertFalse(try filter(hosts: ["api-*.example.com"]).admits(request(host: "web.example.com")))
        XCTAssertFalse(try filter(hosts: ["api-*.example.com"]).admits(request(host: "api-1.example.org")))
        XCTAssertTrue(try filter(hosts: ["*api*"]).admits(request(host: "x.api.y")), "wildcard ends constrain nothing")
        XCTAssertTrue(try filter(hosts: ["api-*.example.com", "web.example.com"]).admits(request(host: "web.example.com")),
                      "several patterns: no host byte constraint")
    }
}

private extension RuleFilterTests {
    func request(host: String) -> RequestFacts { request("GET", "http", host) }
}
