@testable import FlowExport
import Foundation
import HARValidation
import ProxyModel
import XCTest

/// Every kind of flow exports as a valid HAR 1.2 entry holding what the flow holds.
final class HARWriterTests: XCTestCase {
    private func entry(_ flow: Flow, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let data = try exportHAR([flow])
        XCTAssertEqual(HARValidator.problems(in: data), [], file: file, line: line)
        return try XCTUnwrap(harEntries(data).first, file: file, line: line)
    }

    func testEverySampleFlowIsValid() throws {
        let data = try exportHAR(SampleFlows.all)
        XCTAssertEqual(HARValidator.problems(in: data), [])
        XCTAssertEqual(try harEntries(data).count, SampleFlows.all.count)
    }

    func testEmptyExportIsValidWithItsPage() throws {
        let data = try exportHAR([])
        XCTAssertEqual(HARValidator.problems(in: data), [])
        let log = try XCTUnwrap((JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        XCTAssertEqual((log["entries"] as? [Any])?.count, 0)
        let page = try XCTUnwrap((log["pages"] as? [[String: Any]])?.first)
        XCTAssertEqual(page["id"] as? String, "page_1")
        XCTAssertEqual(page["startedDateTime"] as? String, "2026-11-18T11:06:40.000Z")
        XCTAssertEqual((log["creator"] as? [String: Any])?["name"] as? String, "ProxyApp")
    }

    func testPlainFlow() throws {
        let entry = try entry(SampleFlows.plain)
        XCTAssertEqual(entry["startedDateTime"] as? String, "2026-11-18T11:06:40.345Z")
        XCTAssertEqual(entry["pageref"] as? String, "page_1")
        XCTAssertEqual(entry["serverIPAddress"] as? String, "93.184.216.34")
        XCTAssertEqual(entry["connection"] as? String, "127.0.0.1:50000")
        XCTAssertEqual(entry["_id"] as? Int, 1)
        XCTAssertEqual(entry["_kind"] as? String, "http")
        XCTAssertNil(entry["_marked"])
        XCTAssertNil(entry["_rules"], "written only when a rule acted")
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        XCTAssertEqual(request["url"] as? String, "http://example.com/search?q=caf%C3%A9+au+lait&empty=&flag")
        let query = try XCTUnwrap(request["queryString"] as? [[String: String]])
        XCTAssertEqual(query, [["name": "q", "value": "café au lait"], ["name": "empty", "value": ""],
                               ["name": "flag", "value": ""]])
        XCTAssertEqual(request["cookies"] as? [[String: String]], [["name": "a", "value": "1"], ["name": "b", "value": "two"]])
        XCTAssertNil(request["postData"])
        // "GET /search?q=... HTTP/1.1\r\n" + "Host: example.com\r\n" + "Cookie: a=1; b=two\r\n" + "\r\n"
        let path = "/search?q=caf%C3%A9+au+lait&empty=&flag"
        XCTAssertEqual(request["headersSize"] as? Int, "GET \(path) HTTP/1.1\r\nHost: example.com\r\nCookie: a=1; b=two\r\n\r\n".utf8.count)
        XCTAssertEqual(request["bodySize"] as? Int, 0)

        let response = try XCTUnwrap(entry["response"] as? [String: Any])
        XCTAssertEqual(response["status"] as? Int, 200)
        XCTAssertEqual(response["redirectURL"] as? String, "")
        let content = try XCTUnwrap(response["content"] as? [String: Any])
        XCTAssertEqual(content["text"] as? String, "<h1>hi</h1>")
        XCTAssertEqual(content["mimeType"] as? String, "text/html; charset=utf-8")
        XCTAssertNil(content["encoding"])
        XCTAssertNil(content["compression"])
        let cookie = try XCTUnwrap((response["cookies"] as? [[String: Any]])?.first)
        XCTAssertEqual(cookie["name"] as? String, "sid")
        XCTAssertEqual(cookie["value"] as? String, "xyz")
        XCTAssertEqual(cookie["path"] as? String, "/")
        XCTAssertEqual(cookie["domain"] as? String, "example.com")
        XCTAssertEqual(cookie["expires"] as? String, "2026-10-21T07:28:00.000Z")
        XCTAssertEqual(cookie["httpOnly"] as? Bool, true)
        XCTAssertEqual(cookie["secure"] as? Bool, true)
        XCTAssertEqual(cookie["_sameSite"] as? String, "Lax")

        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(timings["blocked"], -1)
        XCTAssertEqual(timings["dns"], 1.5)
        XCTAssertEqual(timings["connect"], 2.25)
        XCTAssertEqual(timings["ssl"], -1)
        XCTAssertEqual(timings["send"], 0.125)
        XCTAssertEqual(entry["time"] as? Double, 11.975)
    }

    /// A hold at a breakpoint is HAR's `blocked` (counted in `time`, so the entry stays valid),
    /// repeated as `_hold` for our import; a replay names its original in `_replayOf`.
    func testHoldIsBlockedAndReplayIsNamed() throws {
        var flow = SampleFlows.plain
        flow.timings.hold = 2_500.25
        flow.replayOf = 7
        let entry = try entry(flow)
        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(timings["blocked"], 2_500.25)
        XCTAssertEqual(timings["_hold"], 2_500.25)
        XCTAssertEqual(entry["_replayOf"] as? Int, 7)
        let unheld = try self.entry(SampleFlows.plain)
        XCTAssertNil((unheld["timings"] as? [String: Double])?["_hold"])
        XCTAssertNil(unheld["_replayOf"])
        let imported = try HARReader.flows(from: try exportHAR([flow, SampleFlows.plain]))
        XCTAssertEqual(imported.map(\.timings.hold), [2_500.25, -1], "our _hold comes back; another tool's blocked does not")
    }

    /// A flow of a shared capture names its proxy in `_proxy`; a local capture's has none.
    func testSharedCaptureFlowsNameTheirProxy() throws {
        var flow = SampleFlows.plain
        flow.proxyName = "lab-1"
        XCTAssertEqual(try entry(flow)["_proxy"] as? String, "lab-1")
        XCTAssertNil(try entry(SampleFlows.plain)["_proxy"])
    }

    func testHTTPSWithTLSDetails() throws {
        let entry = try entry(SampleFlows.httpsWithTLS)
        XCTAssertEqual((entry["request"] as? [String: Any])?["url"] as? String,
                       "https://example.com/search?q=caf%C3%A9+au+lait&empty=&flag")
        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(timings["connect"], 5, "HAR's connect includes ssl")
        XCTAssertEqual(timings["ssl"], 3)
        XCTAssertEqual(entry["time"] as? Double, 1 + 5 + 0.5 + 4 + 0.5)
        XCTAssertEqual(entry["_marked"] as? Bool, true)
        XCTAssertEqual(entry["_note"] as? String, "a note")
        XCTAssertEqual(entry["_rules"] as? [String], ["Map remote: staging", #"Rewrite "UA" \ v2"#], "in the order they acted")
        let tls = try XCTUnwrap(entry["_tls"] as? [String: String])
        XCTAssertEqual(tls, ["clientVersion": "TLSv1.3", "alpn": "http/1.1", "sni": "example.com",
                             "upstreamVersion": "TLSv1.2", "upstreamSubject": "CN=example.com",
                             "upstreamIssuer": "CN=Some CA", "upstreamNotAfter": "2027-01-15T08:00:00.000Z"])
    }

    func testEncodedJSONIsDecodedToText() throws {
        for flow in SampleFlows.encodedJSONFlows {
            let encoding = flow.responseHeaders.first(named: "Content-Encoding") ?? ""
            let content = try XCTUnwrap((try entry(flow)["response"] as? [String: Any])?["content"] as? [String: Any])
            XCTAssertEqual(content["text"] as? String, String(decoding: SampleFlows.json, as: UTF8.self), encoding)
            XCTAssertNil(content["encoding"], encoding)
            XCTAssertEqual(content["size"] as? Int, SampleFlows.json.count, encoding)
            XCTAssertEqual(content["compression"] as? Int, SampleFlows.json.count - flow.responseBody.bytes.count, encoding)
        }
    }

    func testBinaryResponseIsBase64() throws {
        let content = try XCTUnwrap((try entry(SampleFlows.image)["response"] as? [String: Any])?["content"] as? [String: Any])
        XCTAssertEqual(content["encoding"] as? String, "base64")
        XCTAssertEqual(content["text"] as? String, Data(SampleFlows.png).base64EncodedString())
        XCTAssertEqual(content["mimeType"] as? String, "image/png")
    }

    func testFormPostHasParamsAndText() throws {
        let entry = try entry(SampleFlows.formPost)
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        let postData = try XCTUnwrap(request["postData"] as? [String: Any])
        XCTAssertEqual(postData["mimeType"] as? String, "application/x-www-form-urlencoded")
        XCTAssertEqual(postData["text"] as? String, "user=ann+lee&password=s%26cret&remember")
        XCTAssertEqual(postData["params"] as? [[String: String]],
                       [["name": "user", "value": "ann lee"], ["name": "password", "value": "s&cret"],
                        ["name": "remember", "value": ""]])
        XCTAssertEqual(request["bodySize"] as? Int, 39)
        XCTAssertEqual((entry["response"] as? [String: Any])?["redirectURL"] as? String, "/home")
    }

    func testBinaryPostIsBase64WithCustomEncodingField() throws {
        let postData = try XCTUnwrap(((try entry(SampleFlows.binaryPost))["request"] as? [String: Any])?["postData"] as? [String: Any])
        XCTAssertEqual(postData["text"] as? String, Data(SampleFlows.png).base64EncodedString())
        XCTAssertEqual(postData["_encoding"] as? String, "base64")
        XCTAssertNil(postData["params"])
    }

    /// An HTTP/2 exchange says so as Chrome does (`http/2.0`), with no head size (HPACK has none
    /// to give), and reads back as `HTTP/2.0`.
    func testHTTP2ExchangeIsWrittenAsChromeDoes() throws {
        var flow = SampleFlows.noResponse
        flow.httpVersion = "HTTP/2.0"
        let entry = try entry(flow)
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        let response = try XCTUnwrap(entry["response"] as? [String: Any])
        XCTAssertEqual(request["httpVersion"] as? String, "http/2.0")
        XCTAssertEqual(response["httpVersion"] as? String, "http/2.0")
        XCTAssertEqual(request["headersSize"] as? Int, -1)
        XCTAssertEqual(HARHTTPVersion.forFlow(request: "http/2.0", response: nil), "HTTP/2.0")
    }

    func testFlowWithoutResponse() throws {
        let entry = try entry(SampleFlows.noResponse)
        let response = try XCTUnwrap(entry["response"] as? [String: Any])
        XCTAssertEqual(response["status"] as? Int, 0)
        XCTAssertEqual(response["statusText"] as? String, "")
        XCTAssertEqual(response["httpVersion"] as? String, "HTTP/1.0")
        XCTAssertEqual(response["headersSize"] as? Int, -1)
        XCTAssertEqual(response["bodySize"] as? Int, -1)
        let content = try XCTUnwrap(response["content"] as? [String: Any])
        XCTAssertEqual(content.keys.sorted(), ["mimeType", "size"])
        XCTAssertEqual(content["size"] as? Int, 0)
        XCTAssertEqual(content["mimeType"] as? String, "x-unknown")
        let error = "could not connect to down.example.com:80 (connection refused)"
        XCTAssertEqual(entry["_error"] as? String, error)
        XCTAssertEqual(entry["comment"] as? String, error)
        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(timings["wait"], 30, "no phase measured: the duration is the wait")
        XCTAssertEqual(entry["time"] as? Double, 30)
    }

    func testTruncatedBodySaysSo() throws {
        let entry = try entry(SampleFlows.truncated)
        XCTAssertEqual(entry["comment"] as? String, "response body truncated: 10 of 1000 bytes captured")
        let response = try XCTUnwrap(entry["response"] as? [String: Any])
        XCTAssertEqual(response["bodySize"] as? Int, 1000)
        let content = try XCTUnwrap(response["content"] as? [String: Any])
        XCTAssertEqual(content["text"] as? String, "abcdefghij")
        XCTAssertEqual(content["size"] as? Int, 1000)
    }

    func testTruncatedTextLosesOnlyAnIncompleteLastCharacter() throws {
        var flow = SampleFlows.truncated
        flow.responseBody = SampleFlows.body(Array("ab€".utf8).dropLast(1), size: 100)
        let content = (try entry(flow)["response"] as? [String: Any])?["content"] as? [String: Any]
        XCTAssertEqual(content?["text"] as? String, "ab")
        XCTAssertNil(content?["encoding"])
    }

    func testCorruptGzipIsRawBase64WithTheDecodersNote() throws {
        let flow = SampleFlows.corruptGzip
        let entry = try entry(flow)
        let content = try XCTUnwrap((entry["response"] as? [String: Any])?["content"] as? [String: Any])
        XCTAssertEqual(content["encoding"] as? String, "base64")
        XCTAssertEqual(content["text"] as? String, flow.responseBody.bytes.base64EncodedString())
        XCTAssertNil(content["compression"])
        let comment = try XCTUnwrap(entry["comment"] as? String)
        XCTAssertTrue(comment.hasPrefix("response body: corrupt gzip body"), comment)
    }

    func testTunnelIsAConnectEntry() throws {
        let entry = try entry(SampleFlows.tunnel)
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        XCTAssertEqual(request["method"] as? String, "CONNECT")
        XCTAssertEqual(request["url"] as? String, "https://pinned.example.com:443")
        XCTAssertEqual((request["queryString"] as? [Any])?.count, 0)
        XCTAssertEqual(entry["_kind"] as? String, "tunnel")
        XCTAssertEqual(entry["_bytesUp"] as? Int, 517)
        XCTAssertEqual(entry["_bytesDown"] as? Int, 4096)
        XCTAssertEqual((entry["response"] as? [String: Any])?["status"] as? Int, 200)
        let timings = try XCTUnwrap(entry["timings"] as? [String: Double])
        XCTAssertEqual(timings["receive"], 995, "the tunnel's life after connecting")
        XCTAssertEqual(entry["time"] as? Double, 1000)
    }

    /// A SOCKS5 UDP relay is a tunnel entry too, its url `udp://` rather than `https://`.
    func testUDPRelayIsATunnelEntryWithAUDPURL() throws {
        var flow = SampleFlows.tunnel
        flow.method = "UDP"
        flow.scheme = "udp"
        flow.host = "192.0.2.53"
        flow.port = 53
        let request = try XCTUnwrap(try entry(flow)["request"] as? [String: Any])
        XCTAssertEqual(request["method"] as? String, "UDP")
        XCTAssertEqual(request["url"] as? String, "udp://192.0.2.53:53")
    }

    func testControlAndNonASCIICharactersRoundTrip() throws {
        let flow = SampleFlows.awkwardHeaders
        let data = try exportHAR([flow])
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains(#"tab\there\u0001bell\u0007\"quote\" back\\slash"#), text)
        XCTAssertTrue(text.contains(#"\u2028"#))
        XCTAssertTrue(text.contains(#""a\r\nb""#))
        let entry = try entry(flow)
        let headers = try XCTUnwrap((entry["request"] as? [String: Any])?["headers"] as? [[String: String]])
        XCTAssertEqual(headers.map { $0["value"] }, flow.requestHeaders.map(\.value))
        XCTAssertEqual(headers[2]["value"], "a\u{FFFD}b")
        let query = (entry["request"] as? [String: Any])?["queryString"] as? [[String: String]]
        XCTAssertEqual(query, [["name": "x", "value": "%ZZ"]], "a bad escape stays as written")
    }

    func testRedactionFlagRedactsBeforeDerivingCookiesAndQuery() throws {
        var flow = SampleFlows.plain
        flow.path = "/cb?access_token=abc&page=2"
        let entry = try XCTUnwrap(harEntries(try exportHAR([flow], redaction: true)).first)
        let request = try XCTUnwrap(entry["request"] as? [String: Any])
        XCTAssertEqual(request["url"] as? String, "http://example.com/cb?access_token=REDACTED&page=2")
        XCTAssertEqual(request["queryString"] as? [[String: String]],
                       [["name": "access_token", "value": "REDACTED"], ["name": "page", "value": "2"]])
        XCTAssertEqual(request["cookies"] as? [[String: String]],
                       [["name": "a", "value": "REDACTED"], ["name": "b", "value": "REDACTED"]])
        let cookie = ((entry["response"] as? [String: Any])?["cookies"] as? [[String: Any]])?.first
        XCTAssertEqual(cookie?["value"] as? String, "REDACTED")
        XCTAssertEqual(cookie?["path"] as? String, "/")
    }

    func testWriterReportsItsEntryCountAndFlushesOnFinish() throws {
        let output = MemoryOutput()
        let writer = try HARWriter(output: output, creator: HARCreator(name: "p", version: "1"), pageStarted: Date(),
                                   pageTitle: "t", redaction: false)
        XCTAssertTrue(output.text.hasPrefix(#"{"log":{"version":"1.2""#), "the header is written at once")
        try writer.write(SampleFlows.plain)
        try writer.write(SampleFlows.image)
        XCTAssertEqual(writer.entryCount, 2)
        XCTAssertEqual(output.flushCount, 0)
        try writer.finish()
        XCTAssertEqual(output.flushCount, 1)
        XCTAssertTrue(output.text.hasSuffix("]}}\n"))
    }
}
