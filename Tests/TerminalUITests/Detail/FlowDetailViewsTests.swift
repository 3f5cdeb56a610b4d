import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowDetailRenderer` for the other body views and for flows without a usable response.
final class FlowDetailViewsTests: XCTestCase {
    private let size = ScreenSize(width: 80, height: 24)

    /// The JSON response switched to `mode` by cycling, as `v` does.
    private func renderResponse(cycles: Int) -> String {
        let content = DetailFixtures.content(DetailFixtures.login)
        var state = FlowDetailState()
        for _ in 0..<cycles { state.apply(.cycleBodyView, content: content, size: size) }
        return DetailFixtures.render(content, state, width: 80, height: 24).text
    }

    private func render(_ flow: Flow, _ tab: DetailTab) -> String {
        DetailFixtures.render(DetailFixtures.content(flow), FlowDetailState(tab: tab), width: 80, height: 24).text
    }

    /// Text: the body as sent, one line, wrapped at the right edge (long lines wrap by default),
    /// as the Set-Cookie header is.
    func testTextView() {
        XCTAssertEqual(renderResponse(cycles: 1), #"""
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            HTTP/1.1 200 OK
            Content-Type: application/json; charset=utf-8
            Content-Encoding: gzip
            Content-Length: 122
            Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure;
            SameSite=Lax

            ── body (text) · application/json · 122 B (gzip, 119 B decoded) ────────────────
            {"id":42,"name":"Alice \"Al\" {x}","roles":["admin",["nested",[]]],"settings":{}
            ,"score":1e-7,"ok":true,"manager":null}











            line 1 of 8                                 Tab next tab  v view  q back  ? help
            """#)
    }

    func testHexView() {
        XCTAssertEqual(renderResponse(cycles: 2), #"""
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            HTTP/1.1 200 OK
            Content-Type: application/json; charset=utf-8
            Content-Encoding: gzip
            Content-Length: 122
            Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure;
            SameSite=Lax

            ── body (hex) · application/json · 122 B (gzip, 119 B decoded) ─────────────────
            00000000  7b 22 69 64 22 3a 34 32  2c 22 6e 61 6d 65 22 3a  |{"id":42,"name":|
            00000010  22 41 6c 69 63 65 20 5c  22 41 6c 5c 22 20 7b 78  |"Alice \"Al\" {x|
            00000020  7d 22 2c 22 72 6f 6c 65  73 22 3a 5b 22 61 64 6d  |}","roles":["adm|
            00000030  69 6e 22 2c 5b 22 6e 65  73 74 65 64 22 2c 5b 5d  |in",["nested",[]|
            00000040  5d 5d 2c 22 73 65 74 74  69 6e 67 73 22 3a 7b 7d  |]],"settings":{}|
            00000050  2c 22 73 63 6f 72 65 22  3a 31 65 2d 37 2c 22 6f  |,"score":1e-7,"o|
            00000060  6b 22 3a 74 72 75 65 2c  22 6d 61 6e 61 67 65 72  |k":true,"manager|
            00000070  22 3a 6e 75 6c 6c 7d                              |":null}|





            line 1 of 15                                Tab next tab  v view  q back  ? help
            """#)
    }

    func testPendingFlow() {
        XCTAssertEqual(render(DetailFixtures.pending, .response), """
             #8  GET http://slow.test/long-poll  pending
             Request   Response   Timing/TLS
            no response yet




















            line 1 of 1                                 Tab next tab  v view  q back  ? help
            """)
        XCTAssertEqual(render(DetailFixtures.pending, .request), """
             #8  GET http://slow.test/long-poll  pending
             Request   Response   Timing/TLS
            GET /long-poll HTTP/1.1
            Host: slow.test

            ── no body ─────────────────────────────────────────────────────────────────────

















            line 1 of 4                                 Tab next tab  v view  q back  ? help
            """)
    }

    /// A failed tunnel's advice (install the CA, how to undo a pin) sits under its error on the
    /// Response tab, where a user opening the failed row looks first, not only on Timing/TLS.
    func testFailedFlowShowsItsNoteUnderTheError() {
        var flow = DetailFixtures.failed
        flow.note = "this client does not trust the ProxyApp CA yet: install it from http://proxyapp.cert/"
        let lines = render(flow, .response).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[2], "No response: connection refused")
        XCTAssertEqual(lines[3], "Note: this client does not trust the ProxyApp CA yet: install it from http://pro")
        XCTAssertEqual(lines[4], "xyapp.cert/")
    }

    func testFailedFlow() {
        XCTAssertEqual(render(DetailFixtures.failed, .response), """
             #9  GET http://down.test/health  failed: connection refused  41 ms
             Request   Response   Timing/TLS
            No response: connection refused




















            line 1 of 1                                 Tab next tab  v view  q back  ? help
            """)
        XCTAssertEqual(render(DetailFixtures.failed, .timing), """
             #9  GET http://down.test/health  failed: connection refused  41 ms
             Request   Response   Timing/TLS
            Started         2026-11-22 09:05:03.542 +00:00
            Duration        41 ms

            Phases
              DNS              1.5 ms  ████████████████████████████████████████
              Connect               –
              TLS                   –
              Send                  –
              Wait                  –
              Receive               –

            Connection
              Client        127.0.0.1:53301
              Server        down.test:80
              HTTP version  HTTP/1.1
              Error         connection refused

            TLS             none



            line 1 of 18                                Tab next tab  v view  q back  ? help
            """)
    }

    /// The rules that acted on a flow are listed, in order, in the Connection section of the
    /// Timing/TLS page (a flow without any has no such line: see `testFailedFlow`).
    func testTimingPageListsAppliedRules() {
        var flow = DetailFixtures.failed
        flow.appliedRules = ["DNS override: down.test", #"Rewrite "UA""#, "Block ☃"]
        let lines = render(flow, .timing).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(lines[13...18]), [
            "Connection",
            "  Client        127.0.0.1:53301",
            "  Server        down.test:80",
            "  HTTP version  HTTP/1.1",
            #"  Rules         DNS override: down.test, Rewrite "UA", Block ☃"#,
            "  Error         connection refused",
        ])
        XCTAssertTrue(lines.last?.hasPrefix("line 1 of 19") ?? false, lines.joined(separator: "\n"))
    }

    /// A flow from a shared capture names the proxy that captured it, above its client.
    func testTimingPageNamesTheProxyOfASharedCapture() {
        var flow = DetailFixtures.failed
        flow.proxyName = "lab-1"
        let lines = render(flow, .timing).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(lines[13...15]), ["Connection", "  Proxy         lab-1", "  Client        127.0.0.1:53301"])
    }

    /// A flow held at a breakpoint shows the hold as the first phase, its bar before the
    /// network's; a flow never held has no such line.
    func testTimingPageShowsTheHoldFirst() {
        var flow = DetailFixtures.failed
        flow.timings = FlowTimings(connect: 1, send: 1, wait: 1, receive: 1, hold: 4)
        let lines = render(flow, .timing).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let phases = lines.filter { $0.hasPrefix("  ") && $0.contains(" ms  ") }
        let bar = String(repeating: "█", count: 20)  // half of the 40 columns: 4 of the 8 ms
        XCTAssertEqual(phases.first?.hasPrefix("  Held             4.0 ms  " + bar), true, phases.joined(separator: "\n"))
        XCTAssertEqual(phases.first?.contains(bar + "█"), false)
        XCTAssertEqual(phases.dropFirst().first?.hasPrefix("  Connect          1.0 ms  " + String(repeating: "·", count: 20) + "█"), true,
                       "the network's phases follow the hold")
        flow.timings.hold = -1
        XCTAssertFalse(render(flow, .timing).contains("Held"))
    }

    /// Bodies still loading, on a short screen, with an error in the status line.
    func testLoadingBodyAndMessage() {
        let loading = FlowDetailContent(flow: DetailFixtures.login, requestBody: nil, responseBody: nil)
        let grid = DetailFixtures.render(loading, FlowDetailState(), width: 80, height: 12,
                                         message: StatusMessage(.error, "could not read the body: database is locked"))
        XCTAssertEqual(grid.text, """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            HTTP/1.1 200 OK
            Content-Type: application/json; charset=utf-8
            Content-Encoding: gzip
            Content-Length: 122
            Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure;
            SameSite=Lax

            ── body ────────────────────────────────────────────────────────────────────────
            loading body…
            line 1 of 8  could not read the body: database is locked
            """)
        XCTAssertEqual(grid[11, 13].style, CellStyle(foreground: .red, bold: true))
    }

    func testStyles() {
        let grid = DetailFixtures.render(DetailFixtures.content(DetailFixtures.login), FlowDetailState(), width: 80, height: 24)
        XCTAssertTrue(grid[0, 79].style.reverse, "the title bar spans the row")
        XCTAssertEqual(grid.rowText(1).prefix(22), " Request   Response   ")
        XCTAssertEqual(grid[1, 11].style, CellStyle(bold: true, reverse: true), "the current tab")
        XCTAssertEqual(grid[1, 1].style, CellStyle(dim: true))
        XCTAssertEqual(grid[2, 9].style.foreground, .green, "200 is green")
        XCTAssertEqual(grid[3, 0].style, CellStyle(foreground: .cyan, bold: true), "header names")
        XCTAssertEqual(grid[3, 14].style, .plain, "header values")
        XCTAssertEqual(grid[23, 79].style, CellStyle(dim: true), "the key hint")
    }

    /// Left and Right scroll every line; a wide character cut in half shows as a blank.
    func testHorizontalScrolling() {
        let text = "0123456日本語abc\n" + String(repeating: "x", count: 100)
        let headers = [HeaderField(name: "Content-Type", value: "text/plain")]
        let body = CapturedBody(bytes: Data(text.utf8), size: Int64(text.utf8.count))
        let flow = Flow(method: "GET", host: "example.com", path: "/", status: 200, responseHeaders: headers,
                        responseBody: body)
        let content = FlowDetailContent(flow: flow, requestBody: nil,
                                        responseBody: BodyDocument(body: body, headers: headers))
        var state = FlowDetailState()
        state.apply(.scrollRight, content: content, size: size)
        let grid = DetailFixtures.render(content, state, width: 80, height: 24)
        XCTAssertEqual(grid.rowText(2).prefix(8), " 200    ", "HTTP/1.1 scrolled off")
        XCTAssertEqual(grid.rowText(5).prefix(9), "(text) · ")
        XCTAssertEqual(grid.rowText(6).prefix(10), " 本語abc    ", "0123456 and half of 日 scrolled off")
        XCTAssertEqual(grid.rowText(7), String(repeating: "x", count: 80))
        XCTAssertEqual(grid.rowText(23).prefix(21), "line 1 of 6, column 9")
    }
}

/// Screens too small for the layout, and a response that failed after its status line.
final class FlowDetailEdgeCaseTests: XCTestCase {
    func testTinyScreensDrawWhatFits() {
        let content = DetailFixtures.content(DetailFixtures.login)
        var state = FlowDetailState()
        state.apply(.bottom, content: content, size: ScreenSize(width: 80, height: 3))
        XCTAssertEqual(state.top(of: .response), 21, "the last of 22 lines")
        let three = DetailFixtures.render(content, state, width: 30, height: 3)
        XCTAssertEqual(three.text, """
             #7  POST https://api.example…
             Request   Response   Timing/T
            line 22 of 22
            """)
        XCTAssertEqual(DetailFixtures.render(content, state, width: 10, height: 1).text, " #7  POST…", "the id comes first: `export --curl 7` needs it")
        XCTAssertEqual(DetailFixtures.render(content, state, width: 0, height: 0).text, "")
    }

    func testResponseThatFailedAfterItsStatusLine() {
        var flow = DetailFixtures.login
        flow.error = "upstream closed the connection mid-body"
        let grid = DetailFixtures.render(DetailFixtures.content(flow), FlowDetailState(), width: 80, height: 24)
        XCTAssertEqual(grid.rowText(3).trimmingCharacters(in: .whitespaces), "Error: upstream closed the connection mid-body")
        XCTAssertEqual(grid[3, 0].style, CellStyle(foreground: .red, bold: true))
    }

    func testTunnelFlow() {
        let start = DetailFixtures.start
        let tunnel = Flow(kind: .tunnel, clientAddress: "127.0.0.1:53400", startedAt: start,
                          finishedAt: start.addingTimeInterval(12.5), method: "CONNECT", scheme: "tcp", host: "bank.test",
                          port: 443, path: "", bytesUp: 12_000, bytesDown: 36_000,
                          note: "pinned: client rejected the certificate (unknown_ca alert)")
        let content = DetailFixtures.content(tunnel)
        let response = DetailFixtures.render(content, FlowDetailState(), width: 80, height: 8).text
        XCTAssertEqual(response, """
             CONNECT bank.test:443  tunnel  46.9 KiB  12.5 s
             Request   Response   Timing/TLS
            No HTTP response: the tunnel relayed opaque bytes (see Timing/TLS).




            line 1 of 1                                 Tab next tab  v view  q back  ? help
            """)
        let request = DetailFixtures.render(content, FlowDetailState(tab: .request), width: 80, height: 8)
        XCTAssertEqual(request.rowText(2).trimmingCharacters(in: .whitespaces), "CONNECT bank.test:443 HTTP/1.1")
        let timing = DetailFixtures.render(content, FlowDetailState(tab: .timing), width: 80, height: 24).text
        XCTAssertTrue(timing.contains("  Bytes         up 11.7 KiB, down 35.2 KiB\n"), timing)
        XCTAssertTrue(timing.contains("  Note          pinned: client rejected the certificate (unknown_ca alert)\n"), timing)
    }
}

