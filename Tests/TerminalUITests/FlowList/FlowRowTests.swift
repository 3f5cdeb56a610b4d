import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowRow`: what each kind of flow shows in the list.
final class FlowRowTests: XCTestCase {
    private let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-22 09:05:03.042 UTC.
    private let start = Date(timeIntervalSince1970: 1_795_338_303.042)

    func testPlainHTTPResponse() {
        let flow = Flow(id: 7, startedAt: start, finishedAt: start.addingTimeInterval(0.041), method: "POST",
                        host: "example.com", port: 8080, path: "/api/items?q=1", status: 201,
                        responseHeaders: [HeaderField(name: "content-type", value: "Application/JSON; charset=utf-8")],
                        responseBody: CapturedBody(size: 1234))
        let row = FlowRow(flow, timeZone: utc)
        XCTAssertEqual(row.id, 7)
        XCTAssertEqual(row.time, "09:05:03.042")
        XCTAssertEqual(row.method, "POST")
        XCTAssertEqual(row.status, "201")
        XCTAssertEqual(row.statusCode, 201)
        XCTAssertEqual(row.host, "example.com:8080")
        XCTAssertEqual(row.path, "/api/items?q=1")
        XCTAssertEqual(row.url, "http://example.com:8080/api/items?q=1")
        XCTAssertEqual(row.contentType, "application/json")
        XCTAssertEqual(row.size, "1.2 KiB")
        XCTAssertEqual(row.duration, "41 ms")
        XCTAssertEqual(row.kind, .http)
        XCTAssertFalse(row.pinned)
        XCTAssertFalse(row.marked)
        XCTAssertFalse(row.ruleApplied)
        XCTAssertNil(row.error)
        XCTAssertTrue(FlowRow(Flow(appliedRules: ["Block ads"]), timeZone: utc).ruleApplied)
    }

    /// The protocol column: `h1` for HTTP/1.x, `h2` for an HTTP/2 stream, `ws` for an upgrade to
    /// WebSocket (`101`), nothing for a tunnel.
    func testProtocolName() {
        XCTAssertEqual(FlowRow(Flow(httpVersion: "HTTP/1.1", status: 200), timeZone: utc).protocolName, "h1")
        XCTAssertEqual(FlowRow(Flow(httpVersion: "HTTP/1.0"), timeZone: utc).protocolName, "h1")
        XCTAssertEqual(FlowRow(Flow(httpVersion: "HTTP/2.0", status: 200), timeZone: utc).protocolName, "h2")
        XCTAssertEqual(FlowRow(Flow(httpVersion: "HTTP/1.1", status: 101), timeZone: utc).protocolName, "ws")
        XCTAssertEqual(FlowRow(Flow(kind: .tunnel, method: "CONNECT"), timeZone: utc).protocolName, "")
    }

    /// A WebSocket row counts its messages (TYPE) and the bytes relayed both ways (SIZE).
    func testWebSocketRowShowsMessagesAndBytes() {
        let row = FlowRow(Flow(status: 101, bytesUp: 1000, bytesDown: 2048, messageCount: 12), timeZone: utc)
        XCTAssertEqual(row.contentType, "12 messages")
        XCTAssertEqual(row.size, "3.0 KiB", "3,048 bytes")
        XCTAssertEqual(FlowRow(Flow(status: 101, messageCount: 1), timeZone: utc).contentType, "1 message")
    }

    func testTimeFollowsTheTimeZone() {
        let flow = Flow(startedAt: start)
        XCTAssertEqual(FlowRow(flow, timeZone: TimeZone(secondsFromGMT: 5 * 3600 + 1800)!).time, "14:35:03.042")
        XCTAssertEqual(FlowRow(flow, timeZone: TimeZone(secondsFromGMT: -10 * 3600)!).time, "23:05:03.042")
    }

    /// PATH is path and query for https too (the host has its column); the whole URL is kept for
    /// the status line. The default port is left out, other ports kept.
    func testHTTPSShowsThePathAndDefaultPortsAreOmitted() {
        let flow = Flow(startedAt: start, finishedAt: start.addingTimeInterval(1.234), scheme: "https",
                        host: "api.example.com", port: 443, path: "/v1/users", status: 200,
                        responseBody: CapturedBody(size: 512))
        let row = FlowRow(flow, timeZone: utc)
        XCTAssertEqual(row.host, "api.example.com")
        XCTAssertEqual(row.path, "/v1/users")
        XCTAssertEqual(row.url, "https://api.example.com/v1/users")
        XCTAssertEqual(FlowRow(Flow(scheme: "https", host: "a.test", port: 8443, path: "/x?y=1"), timeZone: utc).url,
                       "https://a.test:8443/x?y=1")
        XCTAssertEqual(row.size, "512 B")
        XCTAssertEqual(row.duration, "1.2 s")
        XCTAssertEqual(FlowRow(Flow(host: "::1", port: 80), timeZone: utc).host, "[::1]")
        XCTAssertEqual(FlowRow(Flow(scheme: "https", host: "a.test", port: 80), timeZone: utc).host, "a.test:80")
    }

    func testPendingAndFailedExchanges() {
        let pending = FlowRow(Flow(startedAt: start, host: "slow.test"), timeZone: utc)
        XCTAssertEqual(pending.status, "…")
        XCTAssertEqual(pending.size, "")
        XCTAssertEqual(pending.duration, "")
        XCTAssertNil(pending.statusCode)

        let failed = FlowRow(Flow(startedAt: start, finishedAt: start.addingTimeInterval(0.0004),
                                  host: "down.test", error: "connection refused"), timeZone: utc)
        XCTAssertEqual(failed.status, "ERR")
        XCTAssertEqual(failed.error, "connection refused")
        XCTAssertEqual(failed.duration, "0 ms")
    }

    /// Tunnels: `TUN`, bytes both ways as the size, the note as the path, pinned from the note.
    func testTunnelsAndPinnedTunnels() {
        let tunnel = Flow(kind: .tunnel, startedAt: start, finishedAt: start.addingTimeInterval(65),
                          method: "CONNECT", scheme: "tcp", host: "push.test", port: 443, path: "",
                          bytesUp: 1024 * 1024, bytesDown: 512 * 1024)
        let row = FlowRow(tunnel, timeZone: utc)
        XCTAssertEqual(row.status, "TUN")
        XCTAssertEqual(row.kind, .tunnel)
        XCTAssertEqual(row.host, "push.test")
        XCTAssertEqual(row.size, "1.5 MiB")
        XCTAssertEqual(row.duration, "65.0 s")
        XCTAssertEqual(row.path, "")
        XCTAssertEqual(row.url, "push.test:443", "a tunnel's URL is its CONNECT target")
        XCTAssertFalse(row.pinned)

        var pinned = tunnel
        pinned.port = 5223
        pinned.note = "pinned: client rejected the certificate (unknown_ca alert)"
        pinned.marked = true
        let pinnedRow = FlowRow(pinned, timeZone: utc)
        XCTAssertTrue(pinnedRow.pinned)
        XCTAssertTrue(pinnedRow.marked)
        XCTAssertEqual(pinnedRow.host, "push.test:5223")
        XCTAssertEqual(pinnedRow.path, pinned.note)
        pinned.note = "pinned bank.test for 127.0.0.1 t133110h2_e8f1e7e78f70_375ca2c5e164: client sent unknown_ca after "
            + "our certificate (TLS 1.3); to undo: `p` in the TUI, or `proxyapp pins remove bank.test`"
        XCTAssertTrue(FlowRow(pinned, timeZone: utc).pinned, "the note the engine writes")
        pinned.note = "not pinned: 127.0.0.1 made 10 new pins in the last minute (--pin-rate)"
        XCTAssertFalse(FlowRow(pinned, timeZone: utc).pinned)

        var noted = tunnel
        noted.note = "passed through by rule"
        XCTAssertFalse(FlowRow(noted, timeZone: utc).pinned)
    }

    func testLargeSizes() {
        let row = { (bytes: Int64) in
            FlowRow(Flow(status: 200, responseBody: CapturedBody(size: bytes)), timeZone: self.utc).size
        }
        XCTAssertEqual(row(0), "0 B")
        XCTAssertEqual(row(1023), "1023 B")
        XCTAssertEqual(row(1024), "1.0 KiB")
        XCTAssertEqual(row(5 * 1024 * 1024 * 1024), "5.0 GiB")
        XCTAssertEqual(row(3 * 1024 * 1024 * 1024 * 1024), "3072.0 GiB")
    }
}
