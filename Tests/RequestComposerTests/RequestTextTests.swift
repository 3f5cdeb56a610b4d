import BodyCodec
import ProxyModel
import RequestComposer
import XCTest

/// The editor text: exact rendering, parsing back (comments, CRLF, origin-form, the trailing
/// newline rule), and bodies decoded for editing and encoded again.
final class RequestTextTests: XCTestCase {
    private func field(_ name: String, _ value: String) -> HeaderField { HeaderField(name: name, value: value) }

    func testRenderExactText() throws {
        let text = try RequestText.render(
            method: "POST", url: "https://api.test/items?x=1", httpVersion: "HTTP/1.1",
            headers: [field("Host", "api.test"), field("Content-Type", "application/json"), field("Content-Length", "14"),
                      field("Transfer-Encoding", "chunked"), field(":authority", "api.test")],
            body: Array(#"{"name":"pen"}"#.utf8), comments: ["502 from the origin", "second\nline\u{1B}[31m"])
        XCTAssertEqual(text, """
            # 502 from the origin
            # second
            # line\\x1b[31m
            POST https://api.test/items?x=1 HTTP/1.1
            Host: api.test
            Content-Type: application/json

            {"name":"pen"}

            """)
    }

    func testParseBack() throws {
        let text = "# a comment\n#another\n\nPATCH https://api.test/x HTTP/2\nX-A:  spaced value \t\nContent-Length: 99\nX-Empty:\n\nbody\n"
        XCTAssertEqual(try RequestText.parse(text, defaultOrigin: nil), ComposedRequest(
            method: "PATCH", url: "https://api.test/x", headers: [field("X-A", "spaced value"), field("X-Empty", "")],
            body: Array("body".utf8), httpVersion: "HTTP/2"))
    }

    func testRenderParseRoundTripKeepsABodyEndingInANewline() throws {
        for body in ["", "a", "a\n", "a\n\n", "line1\r\nline2\r\n", "\n"] {
            let text = try RequestText.render(method: "PUT", url: "http://a.test:8080/p", httpVersion: "HTTP/1.1",
                                              headers: [field("X", "1")], body: Array(body.utf8), comments: [])
            let parsed = try RequestText.parse(text, defaultOrigin: nil)
            XCTAssertEqual(parsed.body, Array(body.utf8), body.debugDescription)
            XCTAssertEqual(parsed.headers, [field("X", "1")])
        }
    }

    func testTrailingNewlineRule() throws {
        let head = "POST https://a.test/ HTTP/1.1\n\n"
        XCTAssertEqual(try RequestText.parse(head + "text", defaultOrigin: nil).body, Array("text".utf8), "saved without a final newline")
        XCTAssertEqual(try RequestText.parse(head + "text\n", defaultOrigin: nil).body, Array("text".utf8), "the editor's newline")
        XCTAssertEqual(try RequestText.parse(head + "text\n\n", defaultOrigin: nil).body, Array("text\n".utf8))
        XCTAssertEqual(try RequestText.parse("POST https://a.test/ HTTP/1.1", defaultOrigin: nil).body, [], "no blank line: no body")
    }

    func testCRLFLineEndsAndBodyCRLFPreserved() throws {
        let text = "# note\r\nPOST https://a.test/form HTTP/1.1\r\nContent-Type: text/plain\r\n\r\nline1\r\nline2\r\n\r\n"
        let request = try RequestText.parse(text, defaultOrigin: nil)
        XCTAssertEqual(request.headers, [field("Content-Type", "text/plain")])
        XCTAssertEqual(request.body, Array("line1\r\nline2\r\n".utf8), "the body's CRLFs kept, the editor's final CRLF dropped")
        let mixed = try RequestText.parse("POST https://a.test/ HTTP/1.1\n\na\r\nb\r\n", defaultOrigin: nil)
        XCTAssertEqual(mixed.body, Array("a\r\nb\r".utf8), "with LF head lines only a final LF is the editor's")
    }

    func testOriginFormWithDefaultOrigin() throws {
        let request = try RequestText.parse("GET /search?q=1 HTTP/1.1\n\n", defaultOrigin: "https://example.com/")
        XCTAssertEqual(request.url, "https://example.com/search?q=1")
        XCTAssertEqual(try RequestText.parse("GET /x\n", defaultOrigin: "http://example.com:8080").url, "http://example.com:8080/x")
        XCTAssertThrowsError(try RequestText.parse("GET /x\n", defaultOrigin: "https://example.com/base"))
    }

    func testGzipBodyDecodedForEditingAndEncodedOnParse() throws {
        let original = Array(#"{"greeting":"hello"}"#.utf8)
        let gzipped = try BodyEncoder.encode(original, contentEncoding: "gzip")
        let headers = [field("Content-Type", "application/json"), field("Content-Encoding", "gzip")]
        let text = try RequestText.render(method: "POST", url: "https://a.test/", httpVersion: "HTTP/1.1",
                                          headers: headers, body: gzipped, comments: [])
        XCTAssertTrue(text.hasSuffix("\n\n{\"greeting\":\"hello\"}\n"), text)
        let edited = text.replacingOccurrences(of: "hello", with: "goodbye, world")
        let request = try RequestText.parse(edited, defaultOrigin: nil)
        XCTAssertEqual(request.headers, headers)
        XCTAssertNotEqual(request.body, Array(#"{"greeting":"goodbye, world"}"#.utf8), "sent encoded")
        XCTAssertEqual(BodyDecoder.decode(request.body, contentEncoding: "gzip"),
                       .decoded(Array(#"{"greeting":"goodbye, world"}"#.utf8)))
    }

    func testEveryKnownCodingRoundTrips() throws {
        for coding in ["deflate", "br", "zstd", "gzip, br", "identity", "x-gzip"] {
            let text = "POST https://a.test/ HTTP/1.1\nContent-Encoding: \(coding)\n\nsome text\n"
            let request = try RequestText.parse(text, defaultOrigin: nil)
            XCTAssertEqual(BodyDecoder.decode(request.body, contentEncoding: coding), .decoded(Array("some text".utf8)), coding)
            let again = try RequestText.render(method: request.method, url: request.url, httpVersion: request.httpVersion,
                                               headers: request.headers, body: request.body, comments: [])
            XCTAssertEqual(again, text, coding)
        }
    }

    func testBinaryAndUndecodableBodiesAreRefused() {
        for body: [UInt8] in [[0xFF, 0xFE, 0x41], Array("a\u{0}b".utf8), [0x1B, 0x5B]] {
            XCTAssertThrowsError(try RequestText.render(method: "POST", url: "https://a.test/", httpVersion: "HTTP/1.1",
                                                        headers: [], body: body, comments: [])) { error in
                XCTAssertTrue("\(error)".contains("binary"), "\(error)")
            }
        }
        XCTAssertThrowsError(try RequestText.render(method: "POST", url: "https://a.test/", httpVersion: "HTTP/1.1",
                                                    headers: [field("Content-Encoding", "gzip")], body: Array("not gzip".utf8),
                                                    comments: [])) { error in
            XCTAssertTrue("\(error)".contains("does not decode"), "\(error)")
        }
    }
}
