import Compressors
import Foundation
import ProxyModel
import TerminalUI

/// A realistic intercepted exchange for the detail view: a form POST answered with gzip-encoded
/// JSON over TLS, plus a pending and a failed flow.
enum DetailFixtures {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-22 09:05:03.542 UTC.
    static let start = Date(timeIntervalSince1970: 1_795_338_303.542)

    static let formBody = "user=alice&password=s%C3%A9cret+%26+more&remember=1&note=tab%09here"
    static let json = #"{"id":42,"name":"Alice \"Al\" {x}","roles":["admin",["nested",[]]],"settings":{},"score":1e-7,"ok":true,"manager":null}"#

    static let prettyJSON = """
        {
          "id": 42,
          "name": "Alice \\"Al\\" {x}",
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
        """

    static let tls = TLSDetails(clientVersion: "TLSv1.3", alpn: "http/1.1", sni: "api.example.com",
                                upstreamVersion: "TLSv1.2", upstreamCipher: "ECDHE-ECDSA-AES128-GCM-SHA256",
                                upstreamSubject: "CN=api.example.com", upstreamIssuer: "CN=Example Issuing CA, O=Example",
                                upstreamNotAfter: Date(timeIntervalSince1970: 1_801_440_000))

    static var login: Flow {
        let gzipped = Compressors.gzip(Array(json.utf8))
        return Flow(
            id: 7, clientAddress: "127.0.0.1:53211", startedAt: start, finishedAt: start.addingTimeInterval(0.1402),
            timings: FlowTimings(dns: 3.2, connect: 12, tls: 25.5, send: 0.4, wait: 95, receive: 4.1),
            method: "POST", scheme: "https", host: "api.example.com", port: 443, path: "/v1/login?next=%2Fhome",
            requestHeaders: [
                HeaderField(name: "Host", value: "api.example.com"),
                HeaderField(name: "User-Agent", value: "curl/8.5.0"),
                HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"),
                HeaderField(name: "Content-Length", value: String(formBody.utf8.count)),
            ],
            requestBody: CapturedBody(bytes: Data(formBody.utf8), size: Int64(formBody.utf8.count)),
            status: 200, reason: "OK",
            responseHeaders: [
                HeaderField(name: "Content-Type", value: "application/json; charset=utf-8"),
                HeaderField(name: "Content-Encoding", value: "gzip"),
                HeaderField(name: "Content-Length", value: String(gzipped.count)),
                HeaderField(name: "Set-Cookie", value: "session=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly; Secure; SameSite=Lax"),
            ],
            responseBody: CapturedBody(bytes: Data(gzipped), size: Int64(gzipped.count)),
            tls: tls, serverAddress: "93.184.216.34")
    }

    static var pending: Flow {
        Flow(id: 8, clientAddress: "127.0.0.1:53300", startedAt: start, method: "GET", host: "slow.test",
             path: "/long-poll", requestHeaders: [HeaderField(name: "Host", value: "slow.test")])
    }

    static var failed: Flow {
        Flow(id: 9, clientAddress: "127.0.0.1:53301", startedAt: start, finishedAt: start.addingTimeInterval(0.041),
             timings: FlowTimings(dns: 1.5), method: "GET", host: "down.test", path: "/health",
             requestHeaders: [HeaderField(name: "Host", value: "down.test")], error: "connection refused")
    }

    /// `flow` with both bodies decoded, as the app hands it over.
    static func content(_ flow: Flow) -> FlowDetailContent {
        FlowDetailContent(flow: flow,
                          requestBody: BodyDocument(body: flow.requestBody, headers: flow.requestHeaders),
                          responseBody: BodyDocument(body: flow.responseBody, headers: flow.responseHeaders),
                          timeZone: utc)
    }

    static func render(_ content: FlowDetailContent, _ state: FlowDetailState, width: Int, height: Int,
                       message: StatusMessage? = nil) -> ScreenGrid {
        FlowDetailRenderer.render(state, content: content, size: ScreenSize(width: width, height: height), message: message)
    }
}
