import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// The detail view's two sides of a flow a rule changed: `f` switches Request and Response
/// between the client's side (as sent by the client, as the client got it) and the origin's (as
/// forwarded, as the origin sent it); the tab bar and the first line say which is shown. A flow
/// no rule changed looks as before and `f` leaves it alone.
final class FlowDetailOriginSideTests: XCTestCase {
    static let rewrittenForm = "user=alice&password=REDACTED"

    /// `DetailFixtures.login` sent by a map-remote and rewrite rule to staging, its body
    /// rewritten; the response reached the client unchanged.
    static var rewritten: Flow {
        var flow = DetailFixtures.login
        flow.appliedRules = ["staging"]
        flow.forwardedRequest = ForwardedRequest(
            method: "POST", scheme: "https", host: "staging.example.com", port: 8443, path: "/v1/login?next=%2Fhome",
            headers: [HeaderField(name: "Host", value: "staging.example.com:8443"),
                      HeaderField(name: "User-Agent", value: "rewritten"),
                      HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"),
                      HeaderField(name: "Content-Length", value: String(rewrittenForm.utf8.count))],
            body: CapturedBody(bytes: Data(rewrittenForm.utf8), size: Int64(rewrittenForm.utf8.count)))
        return flow
    }

    static func content(_ flow: Flow) -> FlowDetailContent {
        var content = DetailFixtures.content(flow)
        content.forwardedRequestBody = flow.forwardedRequest?.body.map {
            BodyDocument(body: $0, headers: flow.forwardedRequest!.headers)
        }
        return content
    }

    private func state(_ tab: DetailTab, originSide: Bool, content: FlowDetailContent) -> FlowDetailState {
        var state = FlowDetailState(tab: tab)
        if originSide { state.apply(.toggleOriginSide, content: content, size: ScreenSize(width: 80, height: 24)) }
        return state
    }

    func testRequestAsSentByTheClient80x24() {
        let content = Self.content(Self.rewritten)
        let screen = DetailFixtures.render(content, state(.request, originSide: false, content: content), width: 80, height: 24).text
        XCTAssertEqual(screen, """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request (client)   Response (client)   Timing/TLS
            Request as sent by the client  f: as the origin saw it

            POST /v1/login?next=%2Fhome HTTP/1.1
            Host: api.example.com
            User-Agent: curl/8.5.0
            Content-Type: application/x-www-form-urlencoded
            Content-Length: 67

            ── body (form) · application/x-www-form-urlencoded · 67 B ──────────────────────
            user: alice
            password: sécret & more
            remember: 1
            note: tab   here








            line 1 of 13                                Tab next tab  v view  q back  ? help
            """)
    }

    func testRequestAsForwarded80x24() {
        let content = Self.content(Self.rewritten)
        let screen = DetailFixtures.render(content, state(.request, originSide: true, content: content), width: 80, height: 24).text
        XCTAssertEqual(screen, """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request (forwarded)   Response (origin)   Timing/TLS
            Request as forwarded to the origin  f: as the client saw it
            URL https://staging.example.com:8443/v1/login?next=%2Fhome

            POST /v1/login?next=%2Fhome HTTP/1.1
            Host: staging.example.com:8443
            User-Agent: rewritten
            Content-Type: application/x-www-form-urlencoded
            Content-Length: 28

            ── body (form) · application/x-www-form-urlencoded · 28 B ──────────────────────
            user: alice
            password: REDACTED









            line 1 of 12                                Tab next tab  v view  q back  ? help
            """)
    }

    /// The response no rule changed says so on the origin's side, and shows the client's.
    func testResponseUnchangedOnTheOriginSide() {
        let content = Self.content(Self.rewritten)
        let screen = DetailFixtures.render(content, state(.response, originSide: true, content: content), width: 80, height: 24).text
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[2], "Response as the origin sent it (no rule changed it)  f: as the client saw it")
        XCTAssertEqual(lines[4], "HTTP/1.1 200 OK")
    }

    /// The origin's response with its own body (a rewrite changed it) is shown decoded as the
    /// origin sent it.
    func testOriginResponseBody() {
        var flow = DetailFixtures.login
        flow.originResponse = OriginResponse(
            status: 500, reason: "Internal Server Error", headers: [HeaderField(name: "Content-Type", value: "text/plain")],
            body: CapturedBody(bytes: Data("boom".utf8), size: 4))
        var content = DetailFixtures.content(flow)
        content.originResponseBody = BodyDocument(body: flow.originResponse!.body!, headers: flow.originResponse!.headers)
        let screen = DetailFixtures.render(content, state(.response, originSide: true, content: content), width: 80, height: 24).text
        XCTAssertTrue(screen.contains(" Request (forwarded)   Response (origin) "), screen)
        XCTAssertTrue(screen.contains("HTTP/1.1 500 Internal Server Error"), screen)
        XCTAssertTrue(screen.contains("\nboom\n"), screen)
        XCTAssertFalse(screen.contains("Set-Cookie"), screen)
    }

    /// A flow no rule changed: no side titles, and `f` changes nothing (the app says why).
    func testFlowWithoutAChangeHasOneSide() {
        let content = DetailFixtures.content(DetailFixtures.login)
        let toggled = state(.request, originSide: true, content: content)
        XCTAssertFalse(toggled.showsOriginSide)
        let screen = DetailFixtures.render(content, toggled, width: 80, height: 24).text
        XCTAssertEqual(DetailFixtures.render(content, FlowDetailState(tab: .request), width: 80, height: 24).text, screen)
        XCTAssertTrue(screen.contains(" Request   Response   Timing/TLS"), screen)
    }

    /// 200×50: the same lines, nothing cut; `?` lists `f`.
    func testWideScreenAndHelp() {
        let content = Self.content(Self.rewritten)
        let screen = DetailFixtures.render(content, state(.request, originSide: true, content: content), width: 200, height: 50).text
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(lines.count, 50)
        XCTAssertEqual(Array(lines[1...5]), [
            "Request (forwarded)   Response (origin)   Timing/TLS",
            "Request as forwarded to the origin  f: as the client saw it",
            "URL https://staging.example.com:8443/v1/login?next=%2Fhome", "", "POST /v1/login?next=%2Fhome HTTP/1.1",
        ])
        let help = HelpRenderer.lines(for: .detail, title: "Flow detail")
        XCTAssertTrue(help.contains { $0.hasPrefix("  f ") && $0.contains("as forwarded") }, help.joined(separator: "\n"))
    }

    /// Toggling twice comes back to the client's side.
    func testToggleTwiceReturns() {
        let content = Self.content(Self.rewritten)
        var state = FlowDetailState(tab: .request)
        let size = ScreenSize(width: 80, height: 24)
        state.apply(.toggleOriginSide, content: content, size: size)
        XCTAssertTrue(state.showsOriginSide)
        state.apply(.toggleOriginSide, content: content, size: size)
        XCTAssertFalse(state.showsOriginSide)
    }
}
