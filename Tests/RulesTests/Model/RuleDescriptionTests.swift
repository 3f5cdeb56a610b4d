@testable import Rules
import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// How `rules list` shows a rule (what it matches, what it does) and the ssl_proxying lists.
final class RuleDescriptionTests: XCTestCase {
    private var folder: TemporaryDirectory!
    private var rules: [Rule] = []

    override func setUpWithError() throws {
        folder = try TemporaryDirectory("rules-tests")
        try folder.write("user.json", "{}")
        try folder.makeFolder("web")
        let path = try folder.write("rules.yaml", """
            rules:
              - name: block
                match: { host: ["*.ads.com", ads.example.com], port: 443, scheme: [https, http], method: [POST, GET], path: /x/* }
                block: {}
              - name: block with body
                match: { host: "*" }
                block: { status: 451, body: "no" }
              - name: local file
                match: { host: api.example.com, path_regex: ^/v1/user$ }
                map_local: { file: user.json, status: 201, content_type: application/json }
              - name: local dir
                match: { host: cdn.example.com }
                map_local: { dir: web }
              - name: remote
                match: { host: api.example.com }
                map_remote: { to: "https://staging.example.com:8443/api?debug=1", preserve_host: true }
              - name: remote plain
                match: { host: api.example.com }
                map_remote: { to: "http://[::1]:3000" }
              - name: dns
                match: { host: "*.test", port: 8080 }
                dns: { to: [127.0.0.1, "::1"] }
              - name: rewrite
                match: { host: "*" }
                rewrite:
                  request_headers: { set: { X-A: "1" }, add: { X-B: [a, b] }, remove: [Cookie, Referer] }
                  response_headers: { remove: Server }
                  status: 299
                  request_body: [{ find: a, replace: b }]
                  response_body: [{ find: a, replace: b }, { regex: c, replace: d }]
              - name: rewrite status
                match: { host: "*" }
                rewrite: { status: 299 }
            """)
        rules = try RulesFile.load(path: path).rules
    }

    override func tearDown() {
        folder.remove()
    }

    /// Every condition in order: hosts as written, port, schemes and methods sorted, the path.
    func testMatchDescriptions() {
        XCTAssertEqual(rules.map(\.matchDescription), [
            "host *.ads.com | ads.example.com, port 443, scheme http | https, method GET | POST, path /x/*",
            "host *",
            "host api.example.com, path_regex ^/v1/user$",
            "host cdn.example.com",
            "host api.example.com",
            "host api.example.com",
            "host *.test, port 8080",
            "host *",
            "host *",
        ])
    }

    /// One line per action, in the file's words.
    func testActionDescriptions() {
        XCTAssertEqual(rules.map(\.actionDescription), [
            "block with 403",
            "block with 451 and a body of its own",
            "map_local from file \(folder.path)/user.json (201, application/json)",
            "map_local from directory \(folder.path)/web (200)",
            "map_remote to https://staging.example.com:8443/api?debug=1 (Host kept)",
            "map_remote to http://[::1]:3000",
            "dns to 127.0.0.1, ::1",
            "rewrite request headers (set X-A; add X-B, X-B; remove Cookie, Referer), response headers (remove Server), "
                + "status 299, request body (1 replacement), response body (2 replacements)",
            "rewrite status 299",
        ])
    }

    /// The lists read `decrypt: …` with `never: …` when something is excluded.
    func testSSLProxyingDescription() {
        let hosts = RulesTestSupport.hosts
        XCTAssertEqual(SSLProxyingLists().description, "decrypt: every host")
        XCTAssertEqual(SSLProxyingLists(exclude: hosts("*.apple.com", "bank.com")).description,
                       "decrypt: every host; never: *.apple.com, bank.com")
        XCTAssertEqual(SSLProxyingLists(include: hosts("*.example.com", "api.other.org"), exclude: hosts("*.apple.com")).description,
                       "decrypt: *.example.com, api.other.org; never: *.apple.com")
        XCTAssertEqual(SSLProxyingLists(include: hosts("a.com")).description, "decrypt: a.com")
    }
}
