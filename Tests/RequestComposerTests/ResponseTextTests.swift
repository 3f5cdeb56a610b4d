import BodyCodec
import ProxyModel
import RequestComposer
import XCTest

/// The held-response editor text: exact rendering, parsing back, bodies decoded and encoded
/// again, and every status line a person could get wrong refused with the line and a fix.
final class ResponseTextTests: XCTestCase {
    private func field(_ name: String, _ value: String) -> HeaderField { HeaderField(name: name, value: value) }

    private func refusal(_ text: String) -> String {
        do {
            _ = try ResponseText.parse(text)
            return "parsed"
        } catch let error as ComposeError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    func testRenderExactText() throws {
        let text = try ResponseText.render(
            status: 404, reason: "Not Found",
            headers: [field("Content-Type", "text/plain"), field("Content-Length", "4"), field("Transfer-Encoding", "chunked")],
            body: Array("gone".utf8), comments: ["edit held response #3"])
        XCTAssertEqual(text, "# edit held response #3\nHTTP/1.1 404 Not Found\nContent-Type: text/plain\n\ngone\n")
        XCTAssertEqual(try ResponseText.render(status: 204, reason: "", headers: [], body: [], comments: []), "HTTP/1.1 204\n\n")
    }

    func testParseBackWithCRLFAndAnEmptyReason() throws {
        XCTAssertEqual(try ResponseText.parse("# c\r\n\r\nHTTP/2 299\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc\r\n"),
                       ComposedResponse(status: 299, reason: "", headers: [field("X-A", "1")], body: Array("abc".utf8)))
        XCTAssertEqual(try ResponseText.parse("http/1.0   503   Try  Later  \n\n").reason, "Try  Later")
    }

    func testACompressedBodyIsEditedDecodedAndSentEncoded() throws {
        let original = Array(#"{"flag":false}"#.utf8)
        let gzipped = try BodyEncoder.encode(original, contentEncoding: "gzip")
        let text = try ResponseText.render(status: 200, reason: "OK", headers: [field("Content-Encoding", "gzip")], body: gzipped,
                                           comments: [])
        XCTAssertTrue(text.hasSuffix("\n\n{\"flag\":false}\n"), text)
        let edited = try ResponseText.parse(text.replacingOccurrences(of: "false", with: "true"))
        guard case .decoded(let decoded) = BodyDecoder.decode(edited.body, contentEncoding: "gzip") else {
            return XCTFail("the edited body is not gzip")
        }
        XCTAssertEqual(decoded, Array(#"{"flag":true}"#.utf8))
    }

    func testBadStatusLinesAreRefusedWithTheirLine() {
        XCTAssertEqual(refusal("# only a comment\n"), "the text has no status line: write 'HTTP/1.1 200 OK' after the comments")
        XCTAssertEqual(refusal("200 OK\n\n"), "line 1: the status line must start with the version: write 'HTTP/1.1 200 OK'")
        XCTAssertEqual(refusal("HTTP/3 200 OK\n\n"), "line 1: the status line must start with the version: write 'HTTP/1.1 200 OK'")
        XCTAssertEqual(refusal("#c\nHTTP/1.1 20 OK\n\n"), "line 2: the status '20' is not a three-digit code: write e.g. 'HTTP/1.1 200 OK'")
        XCTAssertEqual(refusal("HTTP/1.1 2000\n\n"), "line 1: the status '2000' is not a three-digit code: write e.g. 'HTTP/1.1 200 OK'")
        XCTAssertEqual(refusal("HTTP/1.1 +20 OK\n\n"), "line 1: the status '+20' is not a three-digit code: write e.g. 'HTTP/1.1 200 OK'")
        XCTAssertEqual(refusal("HTTP/1.1 ٢٠٠ OK\n\n"), "line 1: the status '٢٠٠' is not a three-digit code: write e.g. 'HTTP/1.1 200 OK'")
        for status in [100, 101, 103, 199, 600, 999] {
            XCTAssertTrue(refusal("HTTP/1.1 \(status) X\n\n").hasPrefix("line 1: the status \(status) is not a final one"), "\(status)")
        }
        XCTAssertEqual(refusal("HTTP/1.1 200 " + String(repeating: "x", count: 300) + "\n\n"),
                       "line 1: the reason phrase is over 256 bytes: shorten it")
        XCTAssertEqual(refusal("HTTP/1.1 200 O\u{7F}K\n\n"), "line 1: the reason phrase holds a control character: remove it")
    }

    /// A CR inside the reason would end the status line on the wire; headers after the status
    /// line follow the request format's rules (no folding, names are tokens).
    func testInjectionAttemptsAreRefused() {
        XCTAssertEqual(refusal("HTTP/1.1 200 OK\rSet-Cookie: a=1\n\n"), "line 1: the reason phrase holds a carriage return (CR): remove it")
        XCTAssertTrue(refusal("HTTP/1.1 200 OK\n folded: x\n\n").hasPrefix("line 2: this line starts with a space"))
        XCTAssertTrue(refusal("HTTP/1.1 200 OK\nBad Name: x\n\n").hasPrefix("line 2: the header name 'Bad Name' is not an HTTP token"))
        XCTAssertThrowsError(try ResponseText.render(status: 200, reason: "OK\r\nX: 1", headers: [], body: [], comments: []))
        XCTAssertThrowsError(try ResponseText.render(status: 200, reason: "OK", headers: [], body: [0, 1, 2, 0xFF], comments: []))
    }
}
