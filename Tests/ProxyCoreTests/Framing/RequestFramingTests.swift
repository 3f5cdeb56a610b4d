import ProxyCore
import XCTest

/// How a request's body is framed upstream, decided from the fields the parser read.
final class RequestFramingTests: XCTestCase {
    private func decide(_ fields: [(String, String)], method: String = "GET", http10: Bool = false)
        -> Result<RequestFraming.Decision, FramingRefusal> {
        RequestFraming.decide(fields.map { (name: $0.0, value: $0.1) }, method: method, isHTTP10: http10)
    }

    private func framing(_ fields: [(String, String)], method: String = "GET") throws -> RequestFraming.Decision {
        try decide(fields, method: method).get()
    }

    private func refusal(_ fields: [(String, String)], http10: Bool = false) -> FramingRefusal? {
        if case .failure(let refusal) = decide(fields, http10: http10) { return refusal }
        return nil
    }

    func testContentLengthIsKeptCanonical() throws {
        XCTAssertEqual(try framing([("Content-Length", "5")]), .init(framing: .contentLength(5), isCanonical: true))
        XCTAssertEqual(try framing([("content-length", "0")]), .init(framing: .contentLength(0), isCanonical: true))
        // OWS and leading zeros are read, then written anew.
        XCTAssertEqual(try framing([("Content-Length", " 5 ")]), .init(framing: .contentLength(5), isCanonical: false))
        XCTAssertEqual(try framing([("Content-Length", "007")]), .init(framing: .contentLength(7), isCanonical: false))
    }

    func testChunkedInAnyCaseIsChunked() throws {
        XCTAssertEqual(try framing([("Transfer-Encoding", "chunked")]), .init(framing: .chunked, isCanonical: true))
        for spelling in ["Chunked", "CHUNKED", " chunked ", "chunked,", ", chunked"] {
            XCTAssertEqual(try framing([("transfer-encoding", spelling)]), .init(framing: .chunked, isCanonical: false),
                           spelling)
        }
    }

    func testNoFramingDependsOnTheMethod() throws {
        XCTAssertEqual(try framing([], method: "GET"), .init(framing: .none, isCanonical: true))
        XCTAssertEqual(try framing([], method: "PURGE"), .init(framing: .none, isCanonical: true))
        for method in ["POST", "PUT", "PATCH"] {
            XCTAssertEqual(try framing([], method: method), .init(framing: .contentLength(0), isCanonical: false), method)
        }
    }

    func testOtherTransferCodingsAre501() {
        for fields in [[("Transfer-Encoding", "gzip, chunked")], [("Transfer-Encoding", "identity, chunked")],
                       [("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")],
                       [("Transfer-Encoding", "chunked, chunked")], [("Transfer-Encoding", "chunked;q=1")],
                       [("Transfer-Encoding", "")], [("Transfer-Encoding", "gzip")]] {
            XCTAssertEqual(refusal(fields)?.statusCode, 501, "\(fields)")
            XCTAssertTrue(refusal(fields)?.reason.contains("is not supported") == true)
        }
    }

    func testAmbiguousOrMalformedLengthsAre400() {
        let cases: [[(String, String)]] = [
            [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
            [("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
            [("Content-Length", "5"), ("Content-Length", "5")],
            [("Content-Length", "5, 5")], [("Content-Length", "+5")], [("Content-Length", "-1")],
            [("Content-Length", "0x5")], [("Content-Length", "5.0")], [("Content-Length", "")],
            [("Content-Length", "1234567890123456789")], [("Content-Length", "５")],
        ]
        for fields in cases {
            XCTAssertEqual(refusal(fields)?.statusCode, 400, "\(fields)")
        }
        XCTAssertEqual(refusal([("Content-Length", "5"), ("Content-Length", "5")])?.reason,
                       "the request has more than one Content-Length")
    }

    func testTransferEncodingInHTTP10Is400() {
        XCTAssertEqual(refusal([("Transfer-Encoding", "chunked")], http10: true)?.statusCode, 400)
        XCTAssertNil(refusal([("Content-Length", "3")], http10: true))
    }

    func testFramingHeaderIsSpelledOneWay() {
        XCTAssertEqual(BodyFraming.contentLength(12).header?.name, "Content-Length")
        XCTAssertEqual(BodyFraming.contentLength(12).header?.value, "12")
        XCTAssertEqual(BodyFraming.chunked.header?.value, "chunked")
        XCTAssertNil(BodyFraming.none.header)
        XCTAssertNil(BodyFraming.untilClose.header)
    }
}
