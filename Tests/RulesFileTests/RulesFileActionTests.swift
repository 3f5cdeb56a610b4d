import Foundation
import ProxyCore
@testable import Rules
@testable import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// The block, map_local, map_remote and dns actions: every refusal with its exact text, place
/// and rule, and how map_local paths are resolved.
final class RulesFileActionTests: XCTestCase {
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        folder = try TemporaryDirectory("rules-tests")
        try folder.write("a.json", "{}")
        try folder.makeFolder("web")
    }

    override func tearDown() {
        folder.remove()
    }

    /// A rule named `r` matching every host, whose action (line 4) starts at column 5.
    private func rule(_ action: String, enabled: Bool = true) -> String {
        "rules:\n  - name: r\n    match: { host: \"*\" }\n    \(action)\n" + (enabled ? "" : "    enabled: false\n")
    }

    private func assertActionIssue(_ action: String, _ column: Int, _ message: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        assertIssue(rule(action), issue(4, column, "rule 1 'r'", message), base: folder.path, file: file, line: line)
    }

    // MARK: - block

    /// Block's status range, body and headers types, its own shape and its keys.
    func testBlockProblems() {
        assertActionIssue("block: { status: 99 }", 22, "block status must be a number from 200 to 599, not '99'")
        assertActionIssue("block: { body: [a] }", 20, "block body must be text, not a list")
        assertActionIssue("block: { headers: [a] }", 23,
                          "block headers must be a mapping of header names to values, e.g. { X-Debug: \"1\" }")
        assertActionIssue("block: false", 12, "block must be a mapping (key: value lines), not 'false'")
        assertActionIssue("block: { stat: 404 }", 14, "unknown key 'stat' in block (did you mean 'status'?)")
    }

    /// `block: true`, `block:` and `block: {}` all block with 403 and the default text.
    func testBlockShorthands() throws {
        for action in ["block: true", "block:", "block: {}"] {
            let rules = try RulesTestSupport.parse(rule(action))
            guard case .block(let block) = rules.rules.first?.action else { return XCTFail(action) }
            XCTAssertEqual(block.status, 403, action)
            XCTAssertNil(block.body, action)
            XCTAssertTrue(block.headers.isEmpty, action)
        }
    }

    // MARK: - map_local

    /// file and dir exclude each other; one of them is needed.
    func testMapLocalSource() {
        assertActionIssue("map_local: { file: a.json, dir: web }", 32, "give either file or dir, not both")
        assertActionIssue("map_local: { status: 200 }", 16,
                          "map_local needs a file (file: path/to/file.json) or a directory (dir: path/to/folder)")
        assertActionIssue("map_local: a.json", 16, "map_local must be a mapping (key: value lines), not 'a.json'")
        assertActionIssue("map_local: { file: [a] }", 24, "file must be text, not a list")
    }

    /// A missing path, or one of the wrong kind, is named in full.
    func testMapLocalPathProblems() {
        let base = folder.path
        assertActionIssue("map_local: { file: missing.json }", 24,
                          "map_local file '\(base)/missing.json' does not exist: create it or fix the path (relative paths start at the rules file's folder)")
        assertActionIssue("map_local: { dir: a.json }", 23, "map_local dir '\(base)/a.json' is a file: use file: instead of dir:")
        assertActionIssue("map_local: { file: web }", 24, "map_local file '\(base)/web' is a directory: use dir: instead of file:")
    }

    /// An empty path is refused with a message (it used to drop the rule silently).
    func testMapLocalEmptyPath() {
        assertActionIssue("map_local: { file: \"\" }", 24, "map_local file must be a path, not empty text")
        assertActionIssue("map_local: { dir: \"\" }", 23, "map_local dir must be a path, not empty text")
    }

    /// A file the proxy cannot read is refused. Root reads every file whatever its mode (and CI
    /// runs as root), so as root the parse runs in a child that dropped to user nobody.
    func testMapLocalUnreadableFile() throws {
        let path = try folder.write("secret.json", "{}")
        XCTAssertEqual(chmod(path, 0o000), 0)
        let action = "map_local: { file: secret.json }"
        let message = "map_local file '\(path)' cannot be read: check its permissions"
        guard geteuid() == 0 else { return assertActionIssue(action, 24, message) }
        let found = try UnprivilegedParse.issues(rule(action), base: folder.path)
        XCTAssertEqual(found, [issue(4, 24, "rule 1 'r'", message).description(file: "rules.yaml")])
    }

    /// The child parsing as nobody sees what nobody sees: a readable file is accepted, so the
    /// refusal above comes from the mode, not from the child.
    func testUnprivilegedParseAcceptsAReadableFile() throws {
        try XCTSkipUnless(geteuid() == 0, "the unprivileged child is used only as root")
        XCTAssertEqual(try UnprivilegedParse.issues(rule("map_local: { file: a.json }"), base: folder.path), [])
    }

    /// status, content_type and headers of map_local are checked.
    func testMapLocalOptions() {
        assertActionIssue("map_local: { file: a.json, status: 600 }", 40,
                          "map_local status must be a number from 200 to 599, not '600'")
        assertActionIssue("map_local: { file: a.json, content_type: \"text/plain\\nx\" }", 46,
                          "content_type must be one line without control characters")
        assertActionIssue("map_local: { file: a.json, headers: { Transfer-Encoding: chunked } }", 43,
                          "Transfer-Encoding cannot be set by rules: the proxy manages the framing and connection headers (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade)")
    }

    /// Files are checked only for enabled rules: a disabled rule may name a missing file.
    func testDisabledRuleMayNameAMissingFile() throws {
        let rules = try RulesTestSupport.parse(rule("map_local: { file: missing.json }", enabled: false),
                                               base: folder.path)
        XCTAssertEqual(rules.rules.first?.enabled, false)
        guard case .mapLocal(let local) = rules.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(local.source, .file(folder.path + "/missing.json"))
    }

    /// Relative paths start at the rules file's folder (`..` resolved); `~/` and `~` are the home directory.
    func testMapLocalPathResolution() throws {
        let rulesPath = try folder.write("rules.yaml", """
            rules:
              - name: relative
                match: { host: a.com }
                map_local: { file: ./web/../a.json }
              - name: absolute
                match: { host: b.com }
                map_local: { dir: \(folder.path)/web/ }
              - name: home
                enabled: false
                match: { host: c.com }
                map_local: { file: ~/mocks/x.json }
              - name: home itself
                enabled: false
                match: { host: d.com }
                map_local: { dir: "~" }
            """)
        let rules = try RulesFile.load(path: rulesPath)
        let sources = rules.rules.map { rule -> MapLocalAction.Source? in
            if case .mapLocal(let local) = rule.action { return local.source }
            return nil
        }
        let home = URL(fileURLWithPath: NSHomeDirectory()).standardizedFileURL.path
        XCTAssertEqual(sources, [.file(folder.path + "/a.json"), .directory(folder.path + "/web"),
                                 .file(home + "/mocks/x.json"), .directory(home)])
    }

    // MARK: - map_remote

    /// Every problem a destination URL can have, each at the value, prefixed with `map_remote to`.
    func testMapRemoteDestinationProblems() {
        let cases: [(String, String)] = [
            ("localhost:3000", "'localhost:3000' is not a URL: write scheme://host[:port][/path], e.g. http://127.0.0.1:3000"),
            ("ftp://a.com", "'ftp://a.com': the scheme must be http or https, not 'ftp'"),
            ("http://a.com/x#top", "'http://a.com/x#top': a destination has no #fragment; remove it"),
            ("http://a.com#top", "'http://a.com#top': a destination has no #fragment; remove it"),
            ("http://u:p@a.com", "'http://u:p@a.com': credentials in the URL are not supported; use a rewrite rule to set Authorization"),
            ("http://[::1", "'http://[::1': the IPv6 address has no closing ']'"),
            ("http://[::1]x", "'http://[::1]x': unexpected 'x' after the host"),
            ("http://[::1]:0", "'http://[::1]:0': the port must be a number from 1 to 65535, not '0'"),
            ("http://a.com:65536", "'http://a.com:65536': the port must be a number from 1 to 65535, not '65536'"),
            ("http://a.com:", "'http://a.com:': the port must be a number from 1 to 65535, not ''"),
            ("http://", "'http://': the host is missing"),
            ("https://:8443/x", "'https://:8443/x': the host is missing"),
            ("http://*.a.com", "'http://*.a.com': a destination host cannot hold wildcards"),
            ("http://a..b", "'http://a..b': host pattern 'a..b' has an empty label (two dots in a row): remove the extra dot"),
        ]
        for (url, message) in cases {
            assertActionIssue("map_remote: { to: \"\(url)\" }", 23, "map_remote to " + message)
        }
    }

    /// map_remote needs `to:`; preserve_host is a boolean; `to` is one line.
    func testMapRemoteOtherProblems() {
        assertActionIssue("map_remote: { preserve_host: true }", 17,
                          "map_remote needs 'to:' with the new URL, e.g. to: http://127.0.0.1:3000")
        assertActionIssue("map_remote: { to: \"http://a\", preserve_host: sure }", 50,
                          "preserve_host must be true or false, not 'sure'")
        assertActionIssue("map_remote: { to: \"http://a/\\nb\" }", 23, "map_remote to must be one line without control characters")
        assertActionIssue("map_remote: \"http://a\"", 17, "map_remote must be a mapping (key: value lines), not 'http://a'")
    }

    // MARK: - dns

    /// dns needs `to:` with IP addresses only: one or a list of at most 16.
    func testDNSProblems() {
        assertActionIssue("dns: 127.0.0.1", 10, "dns must be a mapping (key: value lines), not '127.0.0.1'")
        assertActionIssue("dns: {}", 10, "dns needs 'to:' with the IP address(es) to connect to, e.g. to: 127.0.0.1")
        assertActionIssue("dns: { to: example.com }", 16,
                          "dns to 'example.com' is not an IP address: write IPv4 (127.0.0.1) or IPv6 (::1) addresses")
        assertActionIssue("dns: { to: [127.0.0.1, \"::1\", localhost] }", 35,
                          "dns to 'localhost' is not an IP address: write IPv4 (127.0.0.1) or IPv6 (::1) addresses")
        assertActionIssue("dns: { to: [] }", 16, "dns to is an empty list: give at least one value or remove the key")
        assertActionIssue("dns: { to: { a: b } }", 16, "dns to must be a value or a list of values, not a mapping")
        assertActionIssue("dns: { to: [[1.2.3.4]] }", 17, "dns to must be text, not a list")
        let seventeen = (1...17).map { "10.0.0.\($0)" }.joined(separator: ", ")
        assertActionIssue("dns: { to: [\(seventeen)] }", 16, "dns to has 17 entries; at most 16 are allowed")
        assertActionIssue("dns: { to: \"fe80::1%eth0\" }", 16,
                          "dns to 'fe80::1%eth0': a scoped IPv6 address (with %zone) cannot be connected to here: use a global address")
    }

    /// Addresses are kept in canonical form and in order.
    func testDNSAddressesAreCanonical() throws {
        let rules = try RulesTestSupport.parse(rule("dns: { to: [\"[0:0::1]\", 10.0.0.1] }"))
        guard case .dns(let dns) = rules.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(dns.addresses, ["::1", "10.0.0.1"])
    }
    // MARK: - upstream_proxy

    /// upstream_proxy takes a URL the CLI would take, or direct: true; never both, never neither.
    func testUpstreamProxyProblems() {
        assertActionIssue("upstream_proxy: http://p:1", 21, "upstream_proxy must be a mapping (key: value lines), not 'http://p:1'")
        assertActionIssue("upstream_proxy: {}", 21,
                          "upstream_proxy needs 'url:' or 'direct: true', e.g. upstream_proxy: { url: http://proxy.corp:3128 } "
                          + "or upstream_proxy: { direct: true }")
        assertActionIssue("upstream_proxy: { url: \"http://p:1\", direct: true }", 21,
                          "upstream_proxy takes either 'url:' or 'direct: true', not both")
        assertActionIssue("upstream_proxy: { direct: false }", 31,
                          "upstream_proxy direct: false means nothing: give 'url:' instead, e.g. upstream_proxy: "
                          + "{ url: http://proxy.corp:3128 } or upstream_proxy: { direct: true }")
        assertActionIssue("upstream_proxy: { url: \"https://p:1\" }", 28,
                          "upstream_proxy url: TLS to the upstream proxy (https://) is not supported: write http://HOST:PORT "
                          + "(HTTPS requests still go through it encrypted, with CONNECT)")
        assertActionIssue("upstream_proxy: { url: \"http://al:secret@p\" }", 28,
                          "upstream_proxy url: 'http://…@p' has no port: write http://p:PORT")
        assertActionIssue("upstream_proxy: { via: x }", 23,
                          "unknown key 'via' in upstream_proxy (expected one of: url, direct)")
    }

    func testUpstreamProxyRoutes() throws {
        let proxied = try RulesTestSupport.parse(rule("upstream_proxy: { url: \"socks5h://u:p%21@127.0.0.1:9050\" }"))
        guard case .upstreamProxy(let route) = proxied.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(route.proxy, UpstreamProxy(scheme: .socks5h, host: "127.0.0.1", port: 9050, user: "u", password: "p!"))
        XCTAssertEqual(proxied.rules.first?.actionDescription, "upstream_proxy through socks5h://u@127.0.0.1:9050")
        let direct = try RulesTestSupport.parse(rule("upstream_proxy: { direct: true }"))
        guard case .upstreamProxy(.direct) = direct.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(direct.rules.first?.actionDescription, "upstream_proxy direct")
    }

    // MARK: - throttle

    func testThrottleProfiles() throws {
        let preset = try RulesTestSupport.parse(rule("throttle: 3g"))
        guard case .throttle(let threeG) = preset.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(threeG, ThrottleProfile.preset(named: "3g"))
        XCTAssertEqual(preset.rules.first?.actionDescription, "throttle 3g (780kbit down, 330kbit up, 100ms)")
        let figures = try RulesTestSupport.parse(rule("throttle: { down: 1mbit, up: 256kbit, latency: 100ms }"))
        guard case .throttle(let custom) = figures.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(custom, ThrottleProfile(downBytesPerSecond: 125_000, upBytesPerSecond: 32_000, latencyMilliseconds: 100))
        let changed = try RulesTestSupport.parse(rule("throttle: { preset: edge, latency: 1s }"))
        XCTAssertEqual(changed.rules.first?.actionDescription, "throttle edge* (240kbit down, 200kbit up, 1000ms)")
        let off = try RulesTestSupport.parse(rule("throttle: off"))
        XCTAssertEqual(off.rules.first?.actionDescription, "throttle off")
    }

    /// The TUI header's word on throttle rules: the one that slows something by name, several
    /// counted, exemptions (`throttle: off`) and disabled rules not at all.
    func testThrottleSummaryForTheHeader() throws {
        XCTAssertNil(try RulesTestSupport.parse(rule("throttle: off")).throttleSummary)
        XCTAssertNil(try RulesTestSupport.parse(rule("throttle: 3g", enabled: false)).throttleSummary)
        XCTAssertEqual(try RulesTestSupport.parse(rule("throttle: 3g")).throttleSummary, "rule r")
        let two = """
            rules:
              - { name: slow api, match: { host: api.test }, throttle: edge }
              - { name: exempt, match: { host: cdn.test }, throttle: off }
              - { name: slow img, match: { host: img.test }, throttle: { down: 1mbit } }
              - { name: block, match: { host: ads.test }, block: {} }
            """
        XCTAssertEqual(try RulesTestSupport.parse(two).throttleSummary, "2 rules")
    }

    func testThrottleProblems() {
        assertActionIssue("throttle: 5g", 15,
                          "throttle: '5g' is not a preset (edge, 3g, lte, dsl, wifi-lossy), e.g. throttle: 3g or "
                          + "throttle: { down: 1mbit, up: 256kbit, latency: 100ms }")
        assertActionIssue("throttle: {}", 15,
                          "throttle needs a preset or figures, e.g. throttle: 3g or throttle: { down: 1mbit, up: 256kbit, latency: 100ms }")
        assertActionIssue("throttle: { down: fast }", 23,
                          "throttle down='fast' is not a rate: write a positive number and a unit, e.g. 256kbit, 1.5mbit, 100KB "
                          + "(per second; kbit counts bits, KB bytes)")
        assertActionIssue("throttle: { latency: 2min }", 26,
                          "throttle latency '2min' must be a duration up to 60s, e.g. 100ms or 1.5s")
        assertActionIssue("throttle: { preset: 5g }", 25,
                          "throttle preset '5g' is not one of edge, 3g, lte, dsl, wifi-lossy")
        assertActionIssue("throttle: { speed: 1mbit }", 17,
                          "unknown key 'speed' in throttle (expected one of: preset, down, up, latency)")
        assertActionIssue("throttle: { down: [1mbit] }", 23,
                          "throttle down must be a value, e.g. throttle: 3g or throttle: { down: 1mbit, up: 256kbit, latency: 100ms }")
    }
}
