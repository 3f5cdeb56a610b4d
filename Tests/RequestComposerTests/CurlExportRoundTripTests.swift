import FlowExport
import Foundation
import ProxyModel
import RequestComposer
import XCTest

/// `CurlCommandLine.parse(CurlCommand.render(flow))` gives back the request our export meant:
/// the flow's method, URL, body and headers, less what the export leaves to curl (a `Host` equal
/// to the URL's authority, hop-by-hop and framing headers).
final class CurlExportRoundTripTests: XCTestCase {
    private func flow(_ method: String, scheme: String = "https", path: String = "/", version: String = "HTTP/1.1",
                      headers: [(String, String)], body: [UInt8] = []) -> Flow {
        Flow(method: method, scheme: scheme, host: "api.test", port: scheme == "https" ? 443 : 8080, path: path,
             httpVersion: version, requestHeaders: headers.map { HeaderField(name: $0.0, value: $0.1) },
             requestBody: CapturedBody(bytes: Data(body), size: Int64(body.count)))
    }

    private func roundTrip(_ flow: Flow, file: StaticString = #filePath, line: UInt = #line) throws -> ComposedRequest {
        let command = CurlCommand.render(flow)
        let request = try CurlCommandLine.parse(command) { name in
            XCTFail("export read a file: \(name)", file: file, line: line)
            return []
        }
        XCTAssertEqual(request.method, flow.method, command, file: file, line: line)
        XCTAssertEqual(request.url, flow.url, command, file: file, line: line)
        XCTAssertEqual(request.body, Array(flow.requestBody.bytes), command, file: file, line: line)
        return request
    }

    func testGetWithHopByHopAndHost() throws {
        let request = try roundTrip(flow("GET", path: "/items?page=2&sort=name&f[]=a", headers: [
            ("Host", "api.test"), ("User-Agent", "curl/8.5.0"), ("Accept", "*/*"), ("Accept-Encoding", "gzip, br"),
            ("Connection", "keep-alive"), ("Proxy-Connection", "keep-alive"), ("X-Quote", #"it's "$HOME" `x`"#), ("X-Empty", ""),
        ]))
        XCTAssertEqual(request.headers, [
            HeaderField(name: "User-Agent", value: "curl/8.5.0"), HeaderField(name: "Accept", value: "*/*"),
            HeaderField(name: "Accept-Encoding", value: "gzip, br"), HeaderField(name: "X-Quote", value: #"it's "$HOME" `x`"#),
            HeaderField(name: "X-Empty", value: ""),
        ])
    }

    func testPostTextWithNewlinesUsesTheNewlineVariable() throws {
        let body = Array("{\n  \"name\": \"pen\",\n  \"price\": \"$1\"\n}\n".utf8)
        let request = try roundTrip(flow("POST", path: "/items", headers: [
            ("Host", "other.test"), ("Content-Type", "application/json"), ("Content-Length", "\(body.count)"),
        ], body: body))
        XCTAssertEqual(request.headers, [HeaderField(name: "Host", value: "other.test"),
                                         HeaderField(name: "Content-Type", value: "application/json")],
                       "no curl defaults (User-Agent, Accept, form Content-Type) come back")
    }

    func testBinaryBodyThroughTheBase64Pipe() throws {
        let request = try roundTrip(flow("PUT", path: "/blob", headers: [("Content-Type", "application/octet-stream")],
                                         body: [0x00, 0xFF, 0x10, 0x27, 0x0A]))
        XCTAssertEqual(request.headers, [HeaderField(name: "Content-Type", value: "application/octet-stream")])
        _ = try roundTrip(flow("POST", headers: [], body: Array("@/etc/passwd".utf8)))
    }

    func testMethodsAndVersions() throws {
        XCTAssertEqual(try roundTrip(flow("HEAD", headers: [])).httpVersion, "HTTP/1.1")
        _ = try roundTrip(flow("DELETE", headers: [("Content-Type", "text/plain")], body: Array("why".utf8)))
        _ = try roundTrip(flow("OPTIONS", scheme: "http", path: "/x", headers: []))
        XCTAssertEqual(try roundTrip(flow("GET", version: "HTTP/2", headers: [(":authority", "api.test")])).httpVersion, "HTTP/2")
    }

    func testTruncatedBodyCommentAndControlCharacters() throws {
        var truncated = flow("POST", headers: [("Content-Type", "text/plain")], body: Array("tab\there\r\nend".utf8))
        truncated.requestBody.truncated = true
        truncated.requestBody.size = 1000
        _ = try roundTrip(truncated)
    }
}
