import ProxyCore
import XCTest

/// How an origin's response body is read and framed towards the client.
final class ResponseFramingTests: XCTestCase {
    private func decide(_ fields: [(String, String)], status: Int = 200, head: Bool = false)
        -> Result<ResponseFraming.Decision, FramingRefusal> {
        ResponseFraming.decide(fields.map { (name: $0.0, value: $0.1) }, status: status, isHeadRequest: head)
    }

    func testBodiesByTheirFraming() throws {
        XCTAssertEqual(try decide([("Content-Length", "3")]).get().framing, .contentLength(3))
        XCTAssertEqual(try decide([("Transfer-Encoding", "chunked")]).get().framing, .chunked)
        XCTAssertEqual(try decide([("Transfer-Encoding", "Chunked")]).get().isCanonical, false)
        XCTAssertEqual(try decide([]).get().framing, .untilClose)
        // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3), which is then dropped.
        let both = try decide([("Content-Length", "3"), ("Transfer-Encoding", "chunked")]).get()
        XCTAssertEqual(both.framing, .chunked)
        XCTAssertFalse(both.isCanonical)
    }

    func testBodilessResponsesKeepOnlyAValidAdvertisedLength() throws {
        let head = try decide([("Content-Length", "1000")], head: true).get()
        XCTAssertEqual(head.framing, .none)
        XCTAssertEqual(head.advertisedLength, 1000)
        XCTAssertTrue(head.isCanonical)
        XCTAssertEqual(try decide([("Content-Length", "10")], status: 304).get().advertisedLength, 10)
        XCTAssertNil(try decide([("Content-Length", "10")], status: 204).get().advertisedLength)
        XCTAssertFalse(try decide([("Content-Length", "10")], status: 204).get().isCanonical)
        XCTAssertFalse(try decide([("Transfer-Encoding", "chunked")], head: true).get().isCanonical)
    }

    func testUnrelayableFramingIs502() {
        for fields in [[("Transfer-Encoding", "gzip")], [("Transfer-Encoding", "gzip, chunked")],
                       [("Content-Length", "3, 4")], [("Content-Length", "3"), ("Content-Length", "3")]] {
            guard case .failure(let refusal) = decide(fields) else { return XCTFail("\(fields)") }
            XCTAssertEqual(refusal.statusCode, 502, "\(fields)")
        }
    }
}
