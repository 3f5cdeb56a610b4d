import Foundation
import ProxyModel

/// A fixed, varied set of flows for the filter equivalence tests: every kind, NULL statuses,
/// errors, tunnels, marks, applied rules, headers and encoded bodies, spread over a minute.
public enum FilterCorpus {
    public static let start = Date(timeIntervalSince1970: 1_763_760_000)

    public static let flows: [Flow] = {
        let hosts = ["api.example.com", "cdn.example.com", "ws.chat.test", "down.test", "pinned.bank.test",
                     "bücher.example", "10.0.0.7", "2001:db8::1"]
        let methods = ["GET", "POST", "PUT", "DELETE", "OPTIONS", "get"]
        let statuses: [Int?] = [200, 404, nil, 301, 500, 204, nil, 101, 200, 418]
        return (0..<30).map { index in
            let host = hosts[index % hosts.count]
            var flow = Flow(
                kind: .http, clientAddress: "127.0.0.1:\(50000 + index)",
                startedAt: start.addingTimeInterval(Double(index) * 2 + 0.25),
                method: methods[index % methods.count], scheme: index % 3 == 0 ? "https" : "http", host: host,
                port: index % 4 == 0 ? 8443 : (index % 3 == 0 ? 443 : 80), path: "/p/\(index)?q=\(index % 5)",
                requestHeaders: [HeaderField(name: "Host", value: host),
                                 HeaderField(name: "User-Agent", value: index % 2 == 0 ? "curl/8.5" : "Mozilla/5.0")],
                status: statuses[index % statuses.count],
                marked: index % 7 == 3)
            if flow.status != nil {
                flow.reason = "R"
                flow.responseHeaders = [HeaderField(name: "Server", value: index % 2 == 0 ? "nginx" : "envoy")]
            }
            switch index % 5 {
            case 0:
                flow.responseHeaders.append(HeaderField(name: "Content-Type", value: "text/html; charset=utf-8"))
                flow.responseHeaders.append(HeaderField(name: "Content-Encoding", value: "gzip"))
                flow.responseBody = CapturedBody(bytes: Data(gzipHTML), size: Int64(gzipHTML.count))
            case 1:
                flow.requestHeaders.append(HeaderField(name: "Content-Type", value: "application/json"))
                flow.requestBody = CapturedBody(bytes: Data(#"{"password":"pw\#(index)"}"#.utf8), size: 20)
            case 2:
                flow.responseHeaders.append(HeaderField(name: "Content-Type", value: "image/png"))
                flow.responseBody = CapturedBody(bytes: Data([0x89, 0x50, 0x4E, 0x47, 0xFF, 0x00]), size: 6)
            case 3:
                flow.requestHeaders.append(HeaderField(name: "Upgrade", value: "websocket"))
            default:
                break
            }
            if index % 4 == 1 { flow.appliedRules.append("Block ads") }
            if index % 9 == 2 { flow.appliedRules += ["Map local: fixtures/\(index).json", #"Rewrite "UA" \ staging"#] }
            if index % 6 == 4 { flow.error = "upstream reset (\(index))" }
            if index % 10 == 7 { flow.httpVersion = "HTTP/2.0" }
            if index % 11 == 6 { flow.replayOf = Int64(index - 5) }
            if index % 8 == 5 {
                flow.kind = .tunnel
                flow.method = "CONNECT"
                flow.path = ""
                flow.bytesUp = 100
                flow.note = index == 5 ? "pinned: client rejected the certificate" : nil
            }
            return flow
        }
    }()

    /// `gzip.compress(b"<html><title>Checkout complete</title></html>", mtime=0)` from Python.
    public static let gzipHTML: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xb3, 0xc9, 0x28, 0xc9, 0xcd, 0xb1, 0xb3, 0x29,
        0xc9, 0x2c, 0xc9, 0x49, 0xb5, 0x73, 0xce, 0x48, 0x4d, 0xce, 0xce, 0x2f, 0x2d, 0x51, 0x48, 0xce, 0xcf, 0x2d,
        0xc8, 0x49, 0x2d, 0x49, 0xb5, 0xd1, 0x87, 0x48, 0xd8, 0xe8, 0x83, 0x95, 0x01, 0x00, 0x02, 0x52, 0x4a, 0x02,
        0x2d, 0x00, 0x00, 0x00,
    ]

    /// Expressions over every predicate, negated and nested; each matches some flows and not others
    /// (checked by the test), so none is trivially equivalent.
    public static let expressions: [String] = [
        "~d example", "~d ^API\\.", "!~d example", "~d bücher", "~d ::1$", "~d '^10\\.'",
        "~m ^get$", "~m POST|PUT", "!~m GET",
        "~c 200", "!~c 200", "~c 404 | ~c 500", "!(~c 200 | ~c 404)",
        "~q", "!~q", "~s", "!~s", "~e", "!~e", "~e & ~s", "~q & !~e",
        "~marked", "!~marked", "~marked | ~e", "~replay", "!~replay & ~s", "~replay | ~marked",
        "~http", "~tcp", "!~tcp & !~q", "~tcp ~s", "~h2", "!~h2 & ~s", "~h2 | ~tcp",
        "~all & ~d test", "!~all | ~c 101",
        "~u ^https://", "~u :8443/", "p/1", "!~u q=0",
        "~t json", "~tq json", "~ts html", "!~ts html",
        "~h curl", "~hq ^user-agent:\\s*mozilla", "~hs nginx", "!~hs envoy",
        "~b checkout", "~bs 'Checkout complete'", "~bq password", "!~b pw1",
        "~websocket", "!~websocket & ~c 200",
        "~d example & ~b checkout", "~d example | ~b password", "!(~d example & ~bs checkout)",
        "~c 200 ~hs nginx", "(~tcp | ~e) & !~d pinned", "~m GET ~d test | ~marked",
        "!(!~c 204 & !(~d ws | ~u /p/2))",
        "~rule ads", "~rule '^rewrite \"ua\"'", #"~rule \\"#, "!~rule .", "~rule ads & ~rule map",
        "~rule fixtures/1 | ~c 404", "!~rule ads & ~s",
        // A proxy's own capture names no proxy: `~proxy` matches nothing there, `!~proxy` everything.
        "!~proxy '' & ~c 200", "~proxy . | ~c 404",
        // Full-text searches: the index in SQL, FullTextDocument and FullTextTokenizer in Swift.
        "~fts checkout", "~fts 'Checkout complete'", "~fts '\"checkout complete\"'", "~ftsq password", "~ftss 'server nginx'",
        "~fts pw1*", "~fts 'pw1 OR nginx'", "~fts 'envoy NOT p'", "~fts BÜCHER", "~fts 'url:bucher'",
        "~fts 'headers:(curl AND 5)'", "~fts '{url body}: password'", "~fts 'response:html'", "!~fts nginx",
        "~fts nginx & ~u p/1", "~fts curl | ~c 404", "!(~fts envoy & !~b checkout)", "~fts 8443 ~c 200",
        "~ftss 'server NOT envoy'",
    ]
}
