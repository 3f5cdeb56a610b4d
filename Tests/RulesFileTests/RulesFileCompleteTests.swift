import Foundation
@testable import Rules
@testable import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// A file with every rule kind and every key parses into exactly the rules it says.
final class RulesFileCompleteTests: XCTestCase {
    private var folder: TemporaryDirectory!
    private var rules: RuleSet!

    static let text = """
        rules:
          - name: Block ads
            match:
              host: ["*.doubleclick.net", ads.example.com]
            block: {}
          - match:
              host: tracker.example
              port: 443
              scheme: https
              method: [GET, head]
            block:
              status: 451
              body: "blocked by policy"
              headers:
                X-Reason: policy
                Cache-Control: [no-store, private]
          - name: Mock user
            enabled: false
            match:
              host: api.example.com
              path: /v1/user
            map_local:
              file: mocks/user.json
              status: 201
              content_type: application/json; charset=utf-8
              headers: { X-Mock: "1" }
          - name: Static
            match:
              host: cdn.example.com
              path: /static/*
            map_local:
              dir: web
          - name: Staging
            match:
              host: api.example.com
              path_regex: ^/v2/
            map_remote:
              to: https://staging.example.com:8443/api?debug=1
              preserve_host: true
          - name: Local DNS
            match:
              host: "*.test"
              port: 8080
            dns:
              to: [127.0.0.1, "::1"]
          - name: Rewrite
            enabled: yes
            match: { host: "*" }
            rewrite:
              request_headers:
                set: { X-Debug: "1" }
                add: { X-Trace: [a, b] }
                remove: [Cookie, Referer]
              response_headers:
                remove: Server
              status: 299
              request_body:
                - { find: foo, replace: bar }
              response_body:
                - { regex: 'user-(\\d+)', replace: "id-$1" }
                - { find: secret, replace: "" }
        ssl_proxying:
          include: ["*.example.com", api.other.org]
          exclude: "*.apple.com"
        """

    override func setUpWithError() throws {
        folder = try TemporaryDirectory("rules-tests")
        try folder.makeFolder("web")
        let path = try folder.write("rules.yaml", Self.text)
        rules = try RulesFile.load(path: path)
    }

    override func tearDown() {
        folder.remove()
    }

    private func pairs(_ headers: [(name: String, value: String)]) -> [String] {
        headers.map { "\($0.name): \($0.value)" }
    }

    /// Names (written or `kind #n`), enabled flags, kinds, lines and the file-level facts.
    func testRuleList() {
        XCTAssertEqual(rules.rules.map(\.name),
                       ["Block ads", "block #2", "Mock user", "Static", "Staging", "Local DNS", "Rewrite"])
        XCTAssertEqual(rules.rules.map(\.enabled), [true, true, false, true, true, true, true])
        XCTAssertEqual(rules.rules.map(\.kind), [.block, .block, .mapLocal, .mapLocal, .mapRemote, .dns, .rewrite])
        XCTAssertEqual(rules.rules.map(\.line), [2, 6, 17, 27, 33, 40, 46])
        XCTAssertEqual(rules.enabledCount, 6)
        XCTAssertFalse(rules.isInert)
        XCTAssertEqual(rules.source, folder.file("rules.yaml"))
    }

    /// Match conditions as written: host lists, port, lower-case schemes, upper-case methods, paths.
    func testMatches() {
        let matches = rules.rules.map(\.match)
        XCTAssertEqual(matches.map { $0.hosts.patterns.map(\.text) },
                       [["*.doubleclick.net", "ads.example.com"], ["tracker.example"], ["api.example.com"],
                        ["cdn.example.com"], ["api.example.com"], ["*.test"], ["*"]])
        XCTAssertEqual(matches.map(\.port), [nil, 443, nil, nil, nil, 8080, nil])
        XCTAssertEqual(matches.map(\.schemes), [nil, ["https"], nil, nil, nil, nil, nil])
        XCTAssertEqual(matches.map(\.methods), [nil, ["GET", "HEAD"], nil, nil, nil, nil, nil])
        XCTAssertEqual(matches.map { $0.path?.description }, [nil, nil, "path /v1/user", "path /static/*", "path_regex ^/v2/", nil, nil])
    }

    /// Both block rules: the default and the one with status, body and headers in order.
    func testBlockActions() {
        guard case .block(let plain) = rules.rules[0].action, case .block(let full) = rules.rules[1].action else {
            return XCTFail()
        }
        XCTAssertEqual(plain.status, 403)
        XCTAssertNil(plain.body)
        XCTAssertEqual(pairs(plain.headers), [])
        XCTAssertEqual(full.status, 451)
        XCTAssertEqual(full.body, "blocked by policy")
        XCTAssertEqual(pairs(full.headers), ["X-Reason: policy", "Cache-Control: no-store", "Cache-Control: private"])
    }

    /// map_local with every key (a disabled rule: its file need not exist), and with a directory.
    func testMapLocalActions() {
        guard case .mapLocal(let file) = rules.rules[2].action, case .mapLocal(let dir) = rules.rules[3].action else {
            return XCTFail()
        }
        XCTAssertEqual(file.source, .file(folder.file("mocks/user.json")))
        XCTAssertEqual(file.status, 201)
        XCTAssertEqual(file.contentType, "application/json; charset=utf-8")
        XCTAssertEqual(pairs(file.headers), ["X-Mock: 1"])
        XCTAssertEqual(dir.source, .directory(folder.file("web")))
        XCTAssertEqual(dir.status, 200)
        XCTAssertNil(dir.contentType)
        XCTAssertEqual(pairs(dir.headers), [])
    }

    /// map_remote's destination in parts, and preserve_host.
    func testMapRemoteAction() {
        guard case .mapRemote(let remote) = rules.rules[4].action else { return XCTFail() }
        XCTAssertEqual(remote.destination, RemoteDestination(scheme: "https", host: "staging.example.com", port: 8443,
                                                             path: "/api", query: "debug=1"))
        XCTAssertTrue(remote.preserveHost)
    }

    /// dns addresses in order.
    func testDNSAction() {
        guard case .dns(let dns) = rules.rules[5].action else { return XCTFail() }
        XCTAssertEqual(dns, DNSOverride(addresses: ["127.0.0.1", "::1"]))
    }

    /// Every part of the rewrite: header edits in order, status, replacements that work.
    func testRewriteAction() {
        guard case .rewrite(let rewrite) = rules.rules[6].action else { return XCTFail() }
        XCTAssertEqual(pairs(rewrite.requestHeaders.set), ["X-Debug: 1"])
        XCTAssertEqual(pairs(rewrite.requestHeaders.add), ["X-Trace: a", "X-Trace: b"])
        XCTAssertEqual(rewrite.requestHeaders.remove, ["Cookie", "Referer"])
        XCTAssertEqual(pairs(rewrite.responseHeaders.set), [])
        XCTAssertEqual(pairs(rewrite.responseHeaders.add), [])
        XCTAssertEqual(rewrite.responseHeaders.remove, ["Server"])
        XCTAssertEqual(rewrite.status, 299)
        XCTAssertEqual(rewrite.requestBody.count, 1)
        XCTAssertEqual(rewrite.requestBody.reduce("foo food") { $1.apply(to: $0) }, "bar bard")
        XCTAssertEqual(rewrite.responseBody.count, 2)
        XCTAssertEqual(rewrite.responseBody.reduce("user-42 secret user-7") { $1.apply(to: $0) }, "id-42  id-7")
    }

    /// The ssl_proxying lists as written.
    func testSSLProxying() {
        XCTAssertEqual(rules.sslProxying.include?.patterns.map(\.text), ["*.example.com", "api.other.org"])
        XCTAssertEqual(rules.sslProxying.exclude.patterns.map(\.text), ["*.apple.com"])
        XCTAssertFalse(rules.sslProxying.isDefault)
    }
}
