import Foundation
import ProxyModel
import TerminalUI

/// Fifteen varied flows at fixed times, for the screen snapshots.
enum FlowListFixtures {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-22 09:05:03.042 UTC.
    static let start = Date(timeIntervalSince1970: 1_795_338_303.042)

    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    static func http(_ id: Int64, _ method: String = "GET", scheme: String = "http", host: String, port: Int? = nil,
                     path: String, status: Int?, type: String? = nil, size: Int64 = 0, seconds: Double? = 0.041,
                     error: String? = nil, marked: Bool = false, rules: [String] = []) -> Flow {
        let startedAt = at(Double(id) * 0.25)
        return Flow(id: id, startedAt: startedAt, finishedAt: seconds.map { startedAt.addingTimeInterval($0) },
                    method: method, scheme: scheme, host: host, port: port ?? (scheme == "https" ? 443 : 80),
                    path: path, status: status,
                    responseHeaders: type.map { [HeaderField(name: "Content-Type", value: $0)] } ?? [],
                    responseBody: CapturedBody(size: size), error: error, marked: marked, appliedRules: rules)
    }

    static func tunnel(_ id: Int64, host: String, port: Int = 443, bytes: Int64, note: String? = nil) -> Flow {
        let startedAt = at(Double(id) * 0.25)
        return Flow(id: id, kind: .tunnel, startedAt: startedAt, finishedAt: startedAt.addingTimeInterval(12.5),
                    method: "CONNECT", scheme: "tcp", host: host, port: port, path: "", bytesUp: bytes / 4,
                    bytesDown: bytes - bytes / 4, note: note)
    }

    static let flows: [Flow] = [
        http(1, host: "example.com", path: "/", status: 200, type: "text/html; charset=utf-8", size: 5120),
        http(2, scheme: "https", host: "api.example.com", path: "/v1/users?page=2", status: 200,
             type: "application/json", size: 1234, seconds: 0.12),
        http(3, host: "example.com", path: "/missing", status: 404, type: "text/html", size: 162),
        http(4, "POST", scheme: "https", host: "api.example.com", port: 8443, path: "/orders", status: 500,
             type: "application/problem+json", size: 87, seconds: 2.5),
        http(5, host: "down.test", path: "/health", status: nil, error: "connection refused"),
        http(6, host: "slow.test", path: "/long-poll", status: nil, seconds: nil),
        tunnel(7, host: "push.test", bytes: 48_000),
        tunnel(8, host: "bank.test", bytes: 3_500_000, note: "pinned: client rejected the certificate (unknown_ca alert)"),
        http(9, host: "old.test", path: "/", status: 301, size: 0, marked: true),
        http(10, host: "例え.テスト", path: "/検索?q=日本語", status: 200, type: "text/plain", size: 42),
        http(11, host: "cafe\u{301}.test", path: "/cafe\u{301}/me\u{301}nu", status: 200, type: "text/html", size: 900),
        http(12, host: "cdn.example.com", path: "/assets/" + String(repeating: "very-long-segment/", count: 20) + "app.js",
             status: 200, type: "application/javascript", size: 2_400_000, seconds: 0.0004),
        http(13, "PUT", host: "api.local", port: 3000, path: "/items/42", status: 204, seconds: 0.003,
             rules: ["Map remote: staging"]),
        http(14, "OPTIONS", scheme: "https", host: "api.example.com", path: "/v1/users", status: 200, size: 0),
        http(15, "DELETE", scheme: "https", host: "api.example.com", path: "/v1/users/9", status: 403,
             type: "application/json", size: 25, marked: true, rules: ["Block deletes"]),
    ]

    static let header = HeaderInfo(listenAddress: "127.0.0.1:8080", caURL: "http://127.0.0.1:8080/ProxyCA.cer",
                                   flowCount: 1234, filter: "~d api", rules: "off")

    /// All fifteen flows loaded into a state for a screen `height` tall, the 500 row selected.
    static func state(screenHeight: Int) -> FlowListState {
        var state = FlowListState(totalRows: flows.count, visibleRows: FlowListRenderer.listRows(screenHeight: screenHeight))
        state.load(flows.map { FlowRow($0, timeZone: utc) }, at: 0)
        state.apply(.home)
        for _ in 0..<3 { state.apply(.moveDown) }
        return state
    }
}
