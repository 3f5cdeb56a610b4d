import ProxyModel
import RequestComposer
import XCTest

/// Broken or hostile editor text: each refused with a one-line reason and the line it is on;
/// a large body parsed and rendered in one pass.
final class RequestTextAttackTests: XCTestCase {
    private func refusal(_ text: String, origin: String? = nil, file: StaticString = #filePath, line: UInt = #line) -> ComposeError? {
        do {
            let request = try RequestText.parse(text, defaultOrigin: origin)
            XCTFail("accepted: \(request)", file: file, line: line)
            return nil
        } catch let error as ComposeError {
            XCTAssertFalse(error.message.contains("\n"), error.message, file: file, line: line)
            return error
        } catch {
            XCTFail("not a ComposeError: \(error)", file: file, line: line)
            return nil
        }
    }

    func testNoRequestLine() {
        XCTAssertTrue(refusal("")?.message.contains("no request line") == true)
        XCTAssertTrue(refusal("# only\n# comments\n\n")?.message.contains("no request line") == true)
        XCTAssertEqual(refusal("# c\nHost: a.test\n")?.line, 2)
    }

    func testBadMethodToken() {
        XCTAssertTrue(refusal("GE(T https://a.test/ HTTP/1.1\n")?.message.contains("not an HTTP token") == true)
        XCTAssertNotNil(refusal("GET https://a.test/ HTTP/1.1 extra\n"))
        XCTAssertNotNil(refusal("GET https://a.test/ HTTP/1.0\n"))
    }

    func testHeaderNameWithSpace() {
        let error = refusal("GET https://a.test/ HTTP/1.1\nX-Ok: 1\nBad Name: v\n")
        XCTAssertEqual(error?.line, 3)
        XCTAssertTrue(error?.message.contains("not an HTTP token") == true)
        XCTAssertNotNil(refusal("GET https://a.test/ HTTP/1.1\nName : v\n"))
        XCTAssertTrue(refusal("GET https://a.test/ HTTP/1.1\nno colon here\n")?.message.contains("no colon") == true)
        XCTAssertTrue(refusal("GET https://a.test/ HTTP/1.1\nX: a\rInjected: b\n")?.message.contains("carriage return") == true)
    }

    func testObsFoldRefused() {
        let error = refusal("GET https://a.test/ HTTP/1.1\nX-Long: part one\n  part two\n\n")
        XCTAssertEqual(error?.line, 3)
        XCTAssertTrue(error?.message.contains("folded") == true)
    }

    func testBadURL() {
        for url in ["ftp://a.test/", "https://", "https://a.test:0/", "https://bad host/", "a.test/x", "*", "https://[::1/"] {
            XCTAssertEqual(refusal("GET \(url) HTTP/1.1\n")?.line, 1, url)
        }
        XCTAssertNotNil(refusal("GET https://user:pw@a.test/ HTTP/1.1\n"))
    }

    func testOriginFormWithoutDefaultOrigin() {
        XCTAssertTrue(refusal("GET /path HTTP/1.1\n")?.message.contains("--to URL") == true)
        XCTAssertNotNil(refusal("GET /path HTTP/1.1\n", origin: "file:///tmp"))
    }

    func testUnknownContentEncoding() {
        let error = refusal("POST https://a.test/ HTTP/1.1\nContent-Type: text/plain\nContent-Encoding: compress\n\nbody\n")
        XCTAssertEqual(error?.line, 3)
        XCTAssertTrue(error?.message.contains("'compress'") == true)
    }

    /// 8 MB of body: parsed and rendered in one pass (a quadratic step would take minutes).
    func testEightMegabyteBody() throws {
        let line = String(repeating: "x", count: 1023) + "\n"
        let body = String(repeating: line, count: 8 * 1024)
        let request = try RequestText.parse("POST https://a.test/ HTTP/1.1\nContent-Type: text/plain\n\n" + body + "\n",
                                            defaultOrigin: nil)
        XCTAssertEqual(request.body.count, 8 * 1024 * 1024)
        let text = try RequestText.render(method: request.method, url: request.url, httpVersion: request.httpVersion,
                                          headers: request.headers, body: request.body, comments: [])
        XCTAssertEqual(text.utf8.count, 8 * 1024 * 1024 + 57)
    }
}
