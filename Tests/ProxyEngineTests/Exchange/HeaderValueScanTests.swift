import NIOHTTP1
import ProxyCore
import SeededRandom
import XCTest
@testable import ProxyEngine

/// The per-request header scans that replaced NIO's `HTTPHeaders[canonicalForm:]` (which splits
/// and trims every value into a new list) decide exactly as it did: `soleHost()` against the
/// one-element canonical `Host` list, and `HopByHopHeaders` fed raw `Connection` values against
/// the same fed the canonical ones. Hand-picked odd spellings first, then seeded random headers.
final class HeaderValueScanTests: XCTestCase {
    private static let oddValues = [
        "", " ", "\t", ",", " , ", "a", " a ", "\ta\t", "a,", ",a", "a,,", "a, b", "a ,b", "a,b", "A.Test:8080",
        "a\r", "\na", "\r\n", " \r\n a", "close, x-hop", "x-hop ,\tkeep-alive", "Upgrade", "content-length", " Content-Length , host",
        "TE,trailer", "é", " é ,", "\u{301}x", "a\u{0}b", "x-\u{1F600}",
    ]
    private static let oddNames = ["Host", "host", "HOST", "hOsT", "Host ", "Hos", "Hostx", "Connection", "connection",
                                   "CONNECTION", "X-Hop", "x-hop", "Content-Length", "TE"]

    private func canonicalSoleHost(_ headers: HTTPHeaders) -> Substring? {
        let hosts = headers[canonicalForm: "host"]
        return hosts.count == 1 ? hosts[0] : nil
    }

    private func assertSameDecisions(_ headers: HTTPHeaders, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(headers.soleHost().map(String.init), canonicalSoleHost(headers).map(String.init),
                       "\(headers)", file: file, line: line)
        let raw = HopByHopHeaders(connectionValues: headers["connection"], forwardUpgrade: true)
        let canonical = HopByHopHeaders(connectionValues: headers[canonicalForm: "connection"].map(String.init),
                                        forwardUpgrade: true)
        XCTAssertEqual(raw.keepsUpgrade, canonical.keepsUpgrade, "\(headers)", file: file, line: line)
        for name in Self.oddNames + Self.oddValues + HopByHopHeaders.fixed {
            XCTAssertEqual(raw.forwards(name), canonical.forwards(name), "\(name) in \(headers)", file: file, line: line)
        }
    }

    func testOddSpellingsDecideAsTheCanonicalForm() {
        for first in Self.oddValues {
            assertSameDecisions(HTTPHeaders([("Host", first)]))
            assertSameDecisions(HTTPHeaders([("Connection", first), ("x-hop", "1")]))
            for second in Self.oddValues {
                assertSameDecisions(HTTPHeaders([("host", first), ("Accept", "*/*"), ("HOST", second)]))
                assertSameDecisions(HTTPHeaders([("Connection", first), ("connection", second)]))
            }
        }
    }

    func testKnownAnswers() {
        XCTAssertEqual(HTTPHeaders([("Host", " a.test:8080 ")]).soleHost(), "a.test:8080")
        XCTAssertEqual(HTTPHeaders([("Host", "a.test,")]).soleHost(), "a.test", "an empty list part is no host")
        XCTAssertEqual(HTTPHeaders([("Host", "a.test"), ("Host", "")]).soleHost(), "a.test")
        XCTAssertNil(HTTPHeaders([("Host", "a.test, b.test")]).soleHost(), "two hosts in one field")
        XCTAssertNil(HTTPHeaders([("Host", "a.test"), ("host", "a.test")]).soleHost(), "the same host twice")
        XCTAssertNil(HTTPHeaders([("Hostx", "a.test")]).soleHost())
        XCTAssertNil(HTTPHeaders().soleHost())
        let hop = HopByHopHeaders(connectionValues: ["\tX-Hop ,, content-length "], forwardUpgrade: false)
        XCTAssertFalse(hop.forwards("x-hop"))
        XCTAssertTrue(hop.forwards("Content-Length"), "a Connection token never unframes a message")
    }

    func testSeededRandomHeadersDecideAsTheCanonicalForm() {
        var random = SeededRandom(seed: 19)
        let alphabet = Array("aH,  \t\r\nostc-é".unicodeScalars)
        func text(_ length: Int) -> String {
            String(String.UnicodeScalarView((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
        }
        for _ in 0..<3_000 {
            var fields: [(String, String)] = []
            for _ in 0..<Int(random.next() % 4) {
                let name = Self.oddNames[Int(random.next() % UInt64(Self.oddNames.count))]
                fields.append((name, text(Int(random.next() % 12))))
            }
            assertSameDecisions(HTTPHeaders(fields))
        }
    }
}
