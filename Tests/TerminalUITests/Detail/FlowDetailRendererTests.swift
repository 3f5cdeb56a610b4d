import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowDetailRenderer`: snapshots of the three tabs for a realistic flow at 80×24 and 200×50
/// (checked by eye once), plus the text and hex views, a pending, a failed and a loading flow.
final class FlowDetailRendererTests: XCTestCase {
    private let content = DetailFixtures.content(DetailFixtures.login)

    private func render(_ tab: DetailTab, width: Int, height: Int) -> String {
        DetailFixtures.render(content, FlowDetailState(tab: tab), width: width, height: height).text
    }

    func testRequestTab80x24() {
        XCTAssertEqual(render(.request, width: 80, height: 24), """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
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










            line 1 of 11                                Tab next tab  v view  q back  ? help
            """)
    }

    func testResponseTab80x24() {
        XCTAssertEqual(render(.response, width: 80, height: 24), #"""
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            HTTP/1.1 200 OK
            Content-Type: application/json; charset=utf-8
            Content-Encoding: gzip
            Content-Length: 122
            Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure;
            SameSite=Lax

            ── body (json) · application/json · 122 B (gzip, 119 B decoded) ────────────────
            {
              "id": 42,
              "name": "Alice \"Al\" {x}",
              "roles": [
                "admin",
                [
                  "nested",
                  []
                ]
              ],
              "settings": {},
              "score": 1e-7,
              "ok": true,
            line 1 of 22                                Tab next tab  v view  q back  ? help
            """#)
    }

    func testTimingTab80x24() {
        XCTAssertEqual(render(.timing, width: 80, height: 24), """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            Started         2026-11-22 09:05:03.542 +00:00
            Duration        140 ms

            Phases
              DNS              3.2 ms  █
              Connect           12 ms  ·███
              TLS               26 ms  ····████████
              Send             0.4 ms  ············█
              Wait              95 ms  ············███████████████████████████
              Receive          4.1 ms  ·······································█

            Connection
              Client        127.0.0.1:53211
              Server        api.example.com:443 (93.184.216.34)
              HTTP version  HTTP/1.1

            TLS, client side
              Version       TLSv1.3
              ALPN          http/1.1
              SNI           api.example.com
            TLS, server side
            line 1 of 26                                Tab next tab  v view  q back  ? help
            """)
    }

    func testRequestTab200x50() {
        XCTAssertEqual(render(.request, width: 200, height: 50), """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            POST /v1/login?next=%2Fhome HTTP/1.1
            Host: api.example.com
            User-Agent: curl/8.5.0
            Content-Type: application/x-www-form-urlencoded
            Content-Length: 67

            ── body (form) · application/x-www-form-urlencoded · 67 B ──────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
            user: alice
            password: sécret & more
            remember: 1
            note: tab   here




































            line 1 of 11                                                                                                                                                        Tab next tab  v view  q back  ? help
            """)
    }

    func testResponseTab200x50() {
        XCTAssertEqual(render(.response, width: 200, height: 50), #"""
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            HTTP/1.1 200 OK
            Content-Type: application/json; charset=utf-8
            Content-Encoding: gzip
            Content-Length: 122
            Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure; SameSite=Lax

            ── body (json) · application/json · 122 B (gzip, 119 B decoded) ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
            {
              "id": 42,
              "name": "Alice \"Al\" {x}",
              "roles": [
                "admin",
                [
                  "nested",
                  []
                ]
              ],
              "settings": {},
              "score": 1e-7,
              "ok": true,
              "manager": null
            }

























            line 1 of 22                                                                                                                                                        Tab next tab  v view  q back  ? help
            """#)
    }

    func testTimingTab200x50() {
        XCTAssertEqual(render(.timing, width: 200, height: 50), """
             #7  POST https://api.example.com/v1/login?next=%2Fhome  200 OK  122 B  140 ms
             Request   Response   Timing/TLS
            Started         2026-11-22 09:05:03.542 +00:00
            Duration        140 ms

            Phases
              DNS              3.2 ms  █
              Connect           12 ms  ·███
              TLS               26 ms  ····████████
              Send             0.4 ms  ············█
              Wait              95 ms  ············███████████████████████████
              Receive          4.1 ms  ·······································█

            Connection
              Client        127.0.0.1:53211
              Server        api.example.com:443 (93.184.216.34)
              HTTP version  HTTP/1.1

            TLS, client side
              Version       TLSv1.3
              ALPN          http/1.1
              SNI           api.example.com
            TLS, server side
              Version       TLSv1.2
              Cipher        ECDHE-ECDSA-AES128-GCM-SHA256
              Subject       CN=api.example.com
              Issuer        CN=Example Issuing CA, O=Example
              Expires       2027-02-01 UTC





















            line 1 of 26                                                                                                                                                        Tab next tab  v view  q back  ? help
            """)
    }
}

/// A response's trailers (gRPC's status) are listed under its headers, before the body.
final class FlowDetailTrailersTests: XCTestCase {
    func testTrailersFollowTheHeaders() {
        var flow = DetailFixtures.login
        flow.responseHeaders = [HeaderField(name: "content-type", value: "application/grpc")]
        flow.responseTrailers = [HeaderField(name: "grpc-status", value: "5"),
                                 HeaderField(name: "grpc-message", value: "no such thing")]
        let lines = DetailFixtures.render(DetailFixtures.content(flow), FlowDetailState(tab: .response), width: 80, height: 24)
            .text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("content-type") }) else {
            return XCTFail(lines.joined(separator: "\n"))
        }
        XCTAssertEqual(Array(lines[(header + 1)...(header + 4)]).map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }, [
            "",
            "── trailers (sent after the body) ──────────────────────────────────────────────",
            "grpc-status: 5",
            "grpc-message: no such thing",
        ])
        XCTAssertTrue(lines[header + 6].hasPrefix("── body"), lines.joined(separator: "\n"))
    }
}

/// The WebSocket tab at 80×24: a summary, then each message with its arrow, time, kind and size,
/// text as text (JSON pretty-printed), binary as hex, a close as its code and reason, and what
/// was not kept said.
final class WebSocketTabTests: XCTestCase {
    func testMessagesAt80x24() {
        var flow = DetailFixtures.login
        flow.status = 101
        flow.reason = "Switching Protocols"
        flow.messageCount = 5
        let start = DetailFixtures.start
        var content = DetailFixtures.content(flow)
        content.messages = [
            CapturedMessage(direction: .sent, time: start, kind: .text, payload: Data(#"{"op":"subscribe","topic":"prices"}"#.utf8)),
            CapturedMessage(direction: .received, time: start.addingTimeInterval(0.05), kind: .binary, payload: Data([0, 1, 0xFF]),
                            compressed: true),
            CapturedMessage(direction: .received, time: start.addingTimeInterval(0.1), kind: .text, payload: Data("big".utf8),
                            size: 2_000_000, truncated: true),
            CapturedMessage(direction: .sent, time: start.addingTimeInterval(1), kind: .close, payload: Data(), size: 6,
                            closeCode: 1000, closeReason: "done"),
        ]
        let text = DetailFixtures.render(content, FlowDetailState(tab: .webSocket), width: 80, height: 24).text
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }
        XCTAssertEqual(Array(lines[1...19]), [
            " Request   Response   Timing/TLS   WebSocket",
            "5 messages · → 2 (41 B) · ← 2 (1.9 MiB)",
            "",
            "→ 09:05:03.542  text  35 B",
            "   {",
            "     \"op\": \"subscribe\",",
            "     \"topic\": \"prices\"",
            "   }",
            "← 09:05:03.592  binary  3 B  (compressed)",
            "   00000000  00 01 ff                                          |...|",
            "← 09:05:03.642  text  1.9 MiB  (payload not kept whole: over the capture limit)",
            "   big",
            "→ 09:05:04.542  close  6 B",
            "   code 1000: done",
            "… 1 more messages not loaded",
            "",
            "",
            "",
            "",
        ], text)
    }
}
