import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Raw rendering, byte for byte.
final class RawExchangeTests: XCTestCase {
    private func text(_ flow: Flow) -> String {
        String(decoding: RawExchange.render(flow), as: UTF8.self)
    }

    func testRequestAndResponseAsOnTheWire() {
        let gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00]
        let flow = Flow(
            method: "POST", scheme: "http", host: "api.test", port: 8080, path: "/items?x=1",
            requestHeaders: [HeaderField(name: "Host", value: "api.test:8080"), HeaderField(name: "Content-Length", value: "5")],
            requestBody: CapturedBody(bytes: Data("hello".utf8), size: 5),
            status: 201, reason: "Created",
            responseHeaders: [HeaderField(name: "Content-Encoding", value: "gzip"), HeaderField(name: "Content-Length", value: "4")],
            responseBody: CapturedBody(bytes: Data(gzip), size: 4))
        let expected = Array("POST /items?x=1 HTTP/1.1\r\nHost: api.test:8080\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n".utf8)
            + Array("HTTP/1.1 201 Created\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n".utf8) + gzip
        XCTAssertEqual(RawExchange.render(flow), expected, "body bytes as captured, still encoded")
    }

    func testRequestWithoutBodyAndTruncatedResponse() {
        let flow = Flow(
            method: "GET", host: "a.test", path: "/big", httpVersion: "HTTP/1.0",
            requestHeaders: [HeaderField(name: "Host", value: "a.test")],
            status: 200, reason: "OK", responseHeaders: [HeaderField(name: "Content-Length", value: "10")],
            responseBody: CapturedBody(bytes: Data("0123".utf8), size: 10, truncated: true))
        XCTAssertEqual(text(flow), "GET /big HTTP/1.0\r\nHost: a.test\r\n\r\n\r\n"
            + "HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n0123\r\n(body truncated: 4 of 10 bytes captured)\r\n")
    }

    func testNoResponse() {
        let flow = Flow(method: "GET", host: "down.test", path: "/", requestHeaders: [HeaderField(name: "Host", value: "down.test")],
                        error: "connection refused by down.test:80")
        XCTAssertEqual(text(flow), "GET / HTTP/1.1\r\nHost: down.test\r\n\r\n\r\n(no response: connection refused by down.test:80)\r\n")
        var silent = flow
        silent.error = nil
        XCTAssertTrue(text(silent).hasSuffix("\r\n\r\n(no response)\r\n"))
    }

    func testHTTP2ExchangeInHTTP11Form() {
        let flow = Flow(
            method: "GET", scheme: "https", host: "example.com", port: 443, path: "/", httpVersion: "HTTP/2.0",
            requestHeaders: [HeaderField(name: ":authority", value: "example.com"), HeaderField(name: ":method", value: "GET"),
                             HeaderField(name: "accept", value: "*/*")],
            status: 204, responseHeaders: [HeaderField(name: ":status", value: "204"), HeaderField(name: "server", value: "x")])
        XCTAssertEqual(text(flow), "GET / HTTP/1.1\r\nHost: example.com\r\naccept: */*\r\n\r\n\r\nHTTP/1.1 204 \r\nserver: x\r\n\r\n")
    }

    func testTunnel() {
        let flow = Flow(kind: .tunnel, method: "CONNECT", scheme: "https", host: "::1", port: 8443, path: "",
                        requestHeaders: [HeaderField(name: "Host", value: "[::1]:8443")], bytesUp: 100, bytesDown: 2000)
        XCTAssertEqual(text(flow), "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n\r\n(no response)\r\n"
            + "(tunnel: 100 bytes up, 2000 bytes down, not decrypted)\r\n")
    }

    /// A folded value (an imported HAR's repeated `Set-Cookie`, joined with LF or CRLF) is one
    /// line per part under its own name: before, the part after the LF read as a header of its
    /// own (`Injected: 1`).
    func testFoldedValuesAreOneLineEachUnderTheirName() {
        let flow = Flow(
            method: "GET", host: "a.test", path: "/", requestHeaders: [HeaderField(name: "Host", value: "a.test")],
            status: 200, reason: "OK",
            responseHeaders: [HeaderField(name: "Set-Cookie", value: "a=1\nInjected: 1\r\nb=2"), HeaderField(name: "X", value: "y")])
        XCTAssertEqual(text(flow), "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: Injected: 1\r\nSet-Cookie: b=2\r\nX: y\r\n\r\n")
    }
}
