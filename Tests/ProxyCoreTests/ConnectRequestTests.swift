import ProxyCore
import XCTest

/// A CONNECT that declares a body is refused; one that declares none goes on.
final class ConnectRequestTests: XCTestCase {
    private func refusal(_ fields: [(String, String)]) -> String? {
        ConnectRequest.bodyRefusal(fields.map { (name: $0.0, value: $0.1) })
    }

    func testBodyFramingIsRefused() {
        let table: [([(String, String)], String?)] = [
            ([("Host", "example.test:443")], nil),
            ([], nil),
            ([("Content-Length", "0")], nil),
            ([("Content-Length", "0"), ("content-length", "0")], nil),
            ([("Content-Length", "5")], "a CONNECT request has no body: remove Content-Length"),
            ([("CONTENT-LENGTH", "1")], "a CONNECT request has no body: remove Content-Length"),
            ([("Content-Length", "00")], "a CONNECT request has no body: remove Content-Length"),
            ([("Content-Length", "0"), ("Content-Length", "7")], "a CONNECT request has no body: remove Content-Length"),
            ([("Transfer-Encoding", "chunked")], "a CONNECT request has no body: remove Transfer-Encoding"),
            ([("transfer-encoding", "gzip, chunked")], "a CONNECT request has no body: remove Transfer-Encoding"),
            ([("Transfer-Encoding", "identity")], "a CONNECT request has no body: remove Transfer-Encoding"),
            ([("Content-Length", "0"), ("Transfer-Encoding", "chunked")],
             "a CONNECT request has no body: remove Transfer-Encoding"),
        ]
        for (fields, expected) in table {
            XCTAssertEqual(refusal(fields), expected, "\(fields)")
        }
    }
}
