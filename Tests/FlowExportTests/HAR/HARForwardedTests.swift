import FlowExport
import Foundation
import HARValidation
import ProxyModel
import XCTest

/// `_forwarded`: a flow a rule changed keeps the client's view in the entry's `request` and
/// `response`, and the request as forwarded / the response as the origin sent it under
/// `_forwarded` as standard request and response objects; our import reads them back.
final class HARForwardedTests: XCTestCase {
    /// `SampleFlows.plain` sent elsewhere by map-remote with a rewritten body and an added secret;
    /// the origin's response had another status and body.
    static var rewritten: Flow {
        var flow = SampleFlows.plain
        flow.method = "POST"
        flow.requestHeaders.append(HeaderField(name: "Content-Type", value: "text/plain"))
        flow.requestBody = SampleFlows.body(Array("client text".utf8))
        flow.forwardedRequest = ForwardedRequest(
            method: "POST", scheme: "https", host: "staging.test", port: 8443, path: "/v2/search?q=1",
            headers: [HeaderField(name: "Host", value: "staging.test:8443"), HeaderField(name: "Content-Type", value: "text/plain"),
                      HeaderField(name: "Authorization", value: "Bearer SECRET-ADDED")],
            body: SampleFlows.body(Array("forwarded text".utf8)))
        flow.originResponse = OriginResponse(
            status: 503, reason: "Service Unavailable",
            headers: [HeaderField(name: "Content-Type", value: "text/html; charset=utf-8")],
            body: SampleFlows.body(Array("<h1>down</h1>".utf8)))
        return flow
    }

    func testEntryKeepsTheClientsViewAndForwardedHoldsTheOrigins() throws {
        let data = try exportHAR([Self.rewritten, SampleFlows.plain])
        XCTAssertEqual(HARValidator.problems(in: data), [])
        let entries = try harEntries(data)
        let request = try XCTUnwrap(entries[0]["request"] as? [String: Any])
        XCTAssertEqual(request["url"] as? String, "http://example.com/search?q=caf%C3%A9+au+lait&empty=&flag")
        XCTAssertEqual((request["postData"] as? [String: Any])?["text"] as? String, "client text")
        let response = try XCTUnwrap(entries[0]["response"] as? [String: Any])
        XCTAssertEqual(response["status"] as? Int, 200)

        let forwarded = try XCTUnwrap(entries[0]["_forwarded"] as? [String: Any])
        let sent = try XCTUnwrap(forwarded["request"] as? [String: Any])
        XCTAssertEqual(sent["url"] as? String, "https://staging.test:8443/v2/search?q=1")
        XCTAssertEqual((sent["postData"] as? [String: Any])?["text"] as? String, "forwarded text")
        let headers = try XCTUnwrap(sent["headers"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertEqual(headers, ["Host", "Content-Type", "Authorization"])
        let got = try XCTUnwrap(forwarded["response"] as? [String: Any])
        XCTAssertEqual(got["status"] as? Int, 503)
        XCTAssertEqual((got["content"] as? [String: Any])?["text"] as? String, "<h1>down</h1>")
        XCTAssertNil(entries[1]["_forwarded"], "no rule changed it: no _forwarded")
    }

    func testRoundTripThroughImport() throws {
        var requestOnly = SampleFlows.plain
        requestOnly.forwardedRequest = ForwardedRequest(method: "GET", scheme: "http", host: "example.com", port: 80,
                                                        path: "/other", headers: [HeaderField(name: "X-Added", value: "1")])
        let flows = [Self.rewritten, requestOnly, SampleFlows.plain]
        let imported = try HARReader.flows(from: try exportHAR(flows))
        XCTAssertEqual(imported.map(\.forwardedRequest), flows.map(\.forwardedRequest))
        XCTAssertEqual(imported.map(\.originResponse), flows.map(\.originResponse))
        XCTAssertNil(imported[1].forwardedRequest?.body, "the client's body, written twice, is read back as unchanged")
    }

    /// `--redact` covers the origin side too: a rewrite may add a secret the client never sent.
    func testRedactionCoversTheOriginSide() throws {
        let data = try exportHAR([Self.rewritten], redaction: true)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertFalse(text.contains("SECRET-ADDED"), text)
        XCTAssertTrue(text.contains(#"{"name":"Authorization","value":"REDACTED"}"#), text)
    }

    /// Errors inside `_forwarded` name their path; a `_forwarded` of another type is ignored.
    func testImportErrorsAndOtherShapes() throws {
        let entry = #"{"startedDateTime": "2024-05-02T09:41:07Z", "request": {"method": "GET", "url": "http://a.test/"}, "#
        let error = HARImportAssertions.importError(
            #"{"log": {"entries": ["# + entry + #""_forwarded": {"request": {"method": "GET", "url": "a.test"}}}]}}"#)
        XCTAssertEqual(error?.path, "log.entries[0]._forwarded.request.url")
        for other in [#""yes""#, "null", "[1]", "{}"] {
            let flows = try HARImportAssertions.flows(#"{"log": {"entries": ["# + entry + #""_forwarded": \#(other)}]}}"#)
            XCTAssertEqual(flows.first?.hasOriginSide, false, other)
        }
    }
}
