import NIOCore
import NIOEmbedded
import XCTest
@testable import ProxyEngine

/// What a tunnel's first bytes are taken for: only a real request line is HTTP, other
/// upper-case text is opaque, and a prefix that stalls is relayed at the deadline.
final class FirstBytesDecisionTests: XCTestCase {
    /// Was a hang: bytes that are a valid prefix of a ClientHello and then nothing were never
    /// decided. The tunnel's deadline now relays them (`FirstSpeaker`), with a note.
    func testStalledPrefixIsRelayedAtTheDeadline() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 3), .none, "the client spoke first: no origin dial")
        guard case .relay(let note) = speaker.deadlinePassed(clientBytes: 3, after: 30) else {
            return XCTFail("a stalled prefix must be relayed at the deadline")
        }
        XCTAssertTrue(note.contains("first 3 bytes"), note)
    }

    /// The HTTP/2 preface is cleartext HTTP/2; other HTTP/2.0 lines, or the preface's words in
    /// another case, are not.
    func testTheHTTP2PrefaceIsPriorKnowledge() {
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")), .http2PriorKnowledge)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "PRI * HTTP/2.0\r\n")), .http2PriorKnowledge)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "PRI * HTTP/2.")), .needMore)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET / HTTP/2.0\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "pri * http/2.0\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "PRI * HTTP/2.0 \r\n")), .opaque)
    }

    /// an upper-case word and a space is not yet an HTTP request line.
    func testUpperCaseWordsThatAreNoRequestLineAreOpaque() {
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "NICK reviewer\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "SET key value\r\n")), .opaque)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "AUTH PLAIN x\n")), .opaque)
    }

    /// Real request lines still select HTTP, also when the line arrives in pieces.
    func testRequestLinesAreHTTP() {
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET / HTTP/1.1\r\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET http://a.test/x HTTP/1.0\r\nHost: a\r\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "OPTIONS * HTTP/1.1\n")), .http)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET /long")), .needMore)
        XCTAssertEqual(FirstBytes.classify(ByteBuffer(string: "GET / HTTP/1.1")), .needMore)
    }
}
