import BodyCodec
import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// Evaluation of every predicate against hand-built flows.
final class FilterMatchingTests: XCTestCase {
    /// A JSON POST whose response is gzip-encoded JSON, touched by two rules.
    private let api = Flow(
        kind: .http, method: "POST", scheme: "https", host: "api.example.com", port: 443, path: "/v1/login?next=%2F",
        requestHeaders: [HeaderField(name: "Host", value: "api.example.com"),
                         HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"),
                         HeaderField(name: "User-Agent", value: "curl/8.5.0")],
        requestBody: CapturedBody(bytes: Data("user=bob&password=pw".utf8), size: 20),
        status: 200, reason: "OK",
        responseHeaders: [HeaderField(name: "Content-Type", value: "application/json; charset=utf-8"),
                          HeaderField(name: "Content-Encoding", value: "gzip"),
                          HeaderField(name: "Server", value: "nginx")],
        responseBody: CapturedBody(bytes: Data(GzipSample.bytes), size: Int64(GzipSample.bytes.count)),
        appliedRules: ["Rewrite UA", "Map remote: staging"])

    /// A plain GET on a non-default port that has not been answered, marked.
    private let pending = Flow(
        kind: .http, method: "GET", scheme: "http", host: "cdn.test", port: 8080, path: "/img/logo.png",
        requestHeaders: [HeaderField(name: "Accept", value: "image/png")], marked: true)

    /// A failed request: an error and no status.
    private let failed = Flow(kind: .http, method: "GET", host: "down.test", path: "/", error: "connection refused")

    /// An opaque tunnel that a rule kept from being intercepted.
    private let tunnel = Flow(kind: .tunnel, method: "CONNECT", scheme: "https", host: "pinned.test", port: 443,
                              path: "", requestHeaders: [HeaderField(name: "Host", value: "pinned.test:443")],
                              status: 200, bytesUp: 10, bytesDown: 20, appliedRules: ["ssl_proxying off: *.pinned.test"])

    /// A WebSocket upgrade (token list, odd case).
    private let socket = Flow(
        kind: .http, method: "GET", host: "ws.test", path: "/chat",
        requestHeaders: [HeaderField(name: "connection", value: "Upgrade"),
                         HeaderField(name: "upgrade", value: "h2c, WebSocket")],
        status: 101, reason: "Switching Protocols")

    private var all: [Flow] { [api, pending, failed, tunnel, socket] }

    func testDomainURLAndMethod() throws {
        try assertMatches("~d example\\.com", [api])
        try assertMatches("~d ^CDN", [pending], "case-insensitive")
        try assertMatches("~u ^https://api\\.example\\.com/v1/login\\?next=", [api])
        try assertMatches("~u cdn\\.test:8080/img", [pending], "the URL shows a non-default port")
        try assertMatches("~u ^https://pinned\\.test$", [tunnel], "a tunnel's URL has no path")
        try assertMatches("login", [api], "a bare regex is ~u")
        try assertMatches("~m post", [api])
        try assertMatches("~m ^GET$", [pending, failed, socket])
    }

    /// `~c` compares exactly and never matches a flow without a status; `!~c` does.
    func testStatusCode() throws {
        try assertMatches("~c 200", [api, tunnel])
        try assertMatches("~c 20", [])
        try assertMatches("!~c 200", [pending, failed, socket])
    }

    func testContentTypeBySide() throws {
        try assertMatches("~t json", [api])
        try assertMatches("~t form", [api])
        try assertMatches("~tq json", [])
        try assertMatches("~tq form-urlencoded", [api])
        try assertMatches("~ts JSON", [api])
        try assertMatches("~ts form", [])
        try assertMatches("~t image", [], "Accept is not Content-Type")
    }

    /// Header regexes see each line as `Name: value`.
    func testHeadersBySide() throws {
        try assertMatches("~h \"^user-agent: curl/\"", [api])
        try assertMatches("~hq server", [])
        try assertMatches("~hs ^server:\\s*nginx$", [api])
        try assertMatches("~h \"Host: pinned\"", [tunnel])
        try assertMatches("~h ^Accept:", [pending])
        try assertMatches("~hs .", [api], "only the api flow has response headers")
    }

    /// Bodies are searched decoded: the gzip response's text matches, its raw bytes would not.
    func testBodiesAreDecodedBeforeSearching() throws {
        let raw = String(decoding: GzipSample.bytes, as: UTF8.self)
        XCTAssertFalse(try FilterRegex("alice").matches(raw), "the needle must not be visible in the raw bytes")
        XCTAssertEqual(BodyDecoder.decode(GzipSample.bytes, contentEncoding: "gzip"), .decoded(Array(GzipSample.text.utf8)))

        try assertMatches(#"~bs '"user":"alice"'"#, [api])
        try assertMatches("~b hunter2hunter2", [api])
        try assertMatches("~bq alice", [])
        try assertMatches("~bq password=pw", [api])
        try assertMatches("~b password=pw", [api])
        try assertMatches("~bs password", [])
        try assertMatches("~b .", [api], "an empty body never matches")
    }

    /// Body regexes let `.` cross newlines (mitmproxy's DOTALL); other regexes do not.
    func testBodyRegexDotCrossesNewlines() throws {
        var flow = api
        flow.requestBody = CapturedBody(bytes: Data("foo\nbar".utf8), size: 7)
        flow.requestHeaders.append(HeaderField(name: "X-Two-Lines", value: "foo\nbar"))
        for text in [#"~b "foo.bar""#, #"~bq "FOO.bar""#] {
            XCTAssertTrue(try FlowFilter(parsing: text).matches(flow), text)
        }
        XCTAssertFalse(try FlowFilter(parsing: #"~bs "foo.bar""#).matches(flow))
        XCTAssertFalse(try FlowFilter(parsing: #"~hq "foo.bar""#).matches(flow))
    }

    /// A body that does not decode is searched as captured.
    func testCorruptEncodedBodyIsSearchedRaw() throws {
        var flow = api
        flow.responseBody = CapturedBody(bytes: Data("not gzip at all".utf8), size: 15)
        XCTAssertTrue(try FlowFilter(parsing: "~bs \"gzip at\"").matches(flow))
    }

    func testStatePredicates() throws {
        try assertMatches("~q", [pending, failed], "HTTP without a response; tunnels are never ~q")
        try assertMatches("~s", [api, tunnel, socket])
        try assertMatches("~e", [failed])
        try assertMatches("~marked", [pending])
        try assertMatches("~websocket", [socket])
        try assertMatches("~http", [api, pending, failed, socket])
        try assertMatches("~tcp", [tunnel])
        try assertMatches("~all", all)
    }

    /// `~h2`: an exchange whose client spoke HTTP/2; never a tunnel, never HTTP/1.x.
    func testHTTP2Predicate() throws {
        var stream = api
        stream.httpVersion = "HTTP/2.0"
        var tunnelOverH2 = tunnel
        tunnelOverH2.httpVersion = "HTTP/2.0"
        let filter = try FlowFilter(parsing: "~h2")
        XCTAssertTrue(filter.matches(stream))
        XCTAssertFalse(filter.matches(api), api.httpVersion)
        XCTAssertFalse(filter.matches(tunnelOverH2))
        XCTAssertTrue(try FlowFilter(parsing: "!~h2").matches(api))
        XCTAssertTrue(try FlowFilter(parsing: "(~h2)&~h2|~h2").matches(stream), "~h2 ends at an operator")
        XCTAssertEqual(try FlowFilter(parsing: "~h20").expression.description, #"~h "20""#, "~h with a regex that starts with 2")
    }

    /// `~rule` matches when the name of any rule that acted on the flow matches; a flow no rule
    /// touched never does.
    func testAppliedRules() throws {
        try assertMatches("~rule staging", [api])
        try assertMatches("~rule '^map REMOTE:'", [api], "case-insensitive, anchored at each name")
        try assertMatches("~rule 'UA, Map'", [], "names are matched one by one, never joined")
        try assertMatches("~rule '^ssl_proxying off: \\*\\.pinned\\.test$'", [tunnel])
        try assertMatches("~rule .", [api, tunnel])
        try assertMatches("!~rule .", [pending, failed, socket])
        try assertMatches("~rule '' ~tcp", [tunnel], "an empty regex matches any flow some rule touched")
    }

    /// `~proxy` matches the name of the proxy that captured a flow of a shared capture; a flow
    /// of a proxy's own capture (no name) never matches, not even `~proxy ''`.
    func testProxyName() throws {
        var lab1 = api
        lab1.proxyName = "lab-1"
        var ci = tunnel
        ci.proxyName = "CI-Runner"
        let filter = try FlowFilter(parsing: "~proxy '^lab-'")
        XCTAssertTrue(filter.matches(lab1))
        XCTAssertFalse(filter.matches(ci))
        XCTAssertFalse(filter.matches(api), "no name: a proxy's own capture")
        XCTAssertTrue(try FlowFilter(parsing: "~proxy ci-runner & ~tcp").matches(ci), "case-insensitive")
        XCTAssertFalse(try FlowFilter(parsing: "~proxy ''").matches(api))
        XCTAssertTrue(try FlowFilter(parsing: "!~proxy lab").matches(api))
        XCTAssertEqual(try FlowFilter(parsing: "~proxy lab").verdictBeforeResponse(lab1), true, "known from the start")
        XCTAssertThrowsError(try FlowFilter(parsing: "~proxy"), "needs a name")
    }

    /// A tunnel without a status is not `~q` either.
    func testTunnelWithoutStatusIsNotARequestWithoutResponse() throws {
        var open = tunnel
        open.status = nil
        XCTAssertFalse(try FlowFilter(parsing: "~q").matches(open))
        XCTAssertTrue(try FlowFilter(parsing: "!~s").matches(open))
    }

    func testOperatorsCombine() throws {
        try assertMatches("~http & !~s", [pending, failed])
        try assertMatches("~e | ~marked", [pending, failed])
        try assertMatches("~m GET ~c 101", [socket])
        try assertMatches("!(~m GET | ~tcp)", [api])
        try assertMatches("~d test$ !~websocket ~s", [tunnel])
        try assertMatches("~q | ~s ~http", [api, pending, failed, socket])
    }

    // MARK: - Helpers

    private func assertMatches(_ text: String, _ expected: [Flow], _ message: String = "",
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let filter = try FlowFilter(parsing: text)
        let matched = all.filter(filter.matches).map(\.host)
        XCTAssertEqual(matched, expected.map(\.host), "\(text) \(message)", file: file, line: line)
    }
}

/// A gzip stream made by Python's `gzip.compress(text, mtime=0)`, fixed here so the test target
/// needs no compressor.
enum GzipSample {
    static let text = #"{"user":"alice","token":"hunter2hunter2hunter2"}"#
    static let bytes: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xab, 0x56, 0x2a, 0x2d, 0x4e, 0x2d, 0x52, 0xb2,
        0x52, 0x4a, 0xcc, 0xc9, 0x4c, 0x4e, 0x55, 0xd2, 0x51, 0x2a, 0xc9, 0xcf, 0x4e, 0xcd, 0x03, 0xf2, 0x33, 0x4a,
        0xf3, 0x4a, 0x52, 0x8b, 0x8c, 0x50, 0x29, 0xa5, 0x5a, 0x00, 0x24, 0x99, 0x58, 0xbe, 0x30, 0x00, 0x00, 0x00,
    ]
}
