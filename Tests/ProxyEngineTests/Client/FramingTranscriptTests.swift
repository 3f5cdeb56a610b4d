import NIOCore
import NIOEmbedded
import NIOHTTP1
import ProxyCore
import ProxyModel
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// Message framing as transcripts: the exact bytes the origin gets for requests that try to
/// hide or bend their framing, and what the client gets for responses that do. The proxy writes
/// exactly one framing header of its own each way (`RequestFraming`, `ResponseFraming`).
final class FramingTranscriptTests: XCTestCase {
    /// `Connection: Content-Length` is ignored: the body keeps its length upstream.
    func testConnectionTokenNamingContentLengthIsIgnored() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nConnection: Content-Length\r\n"
                                + "Content-Length: 5\r\n\r\nhello")
        XCTAssertEqual(try harness.originReceived(), "GET /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello")
    }

    /// `Proxy-Connection: Transfer-Encoding` and an odd spelling of chunked: the body goes out
    /// chunked, with the one header spelled `chunked`.
    func testChunkedSpellingsAreForwardedChunked() throws {
        let harness = try EngineHarness()
        try harness.clientSends("DELETE http://a.test/x HTTP/1.1\r\nHost: a.test\r\nProxy-Connection: transfer-encoding\r\n"
                                + "Transfer-Encoding: CHUNKED\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(),
                       "DELETE /x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    }

    /// `Connection: Host` cannot take the Host header away.
    func testConnectionTokenNamingHostIsIgnored() throws {
        let harness = try EngineHarness()
        try harness.clientSends("OPTIONS http://a.test/x HTTP/1.1\r\nHost: a.test\r\nConnection: Host, X-Hop\r\nX-Hop: 1\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(), "OPTIONS /x HTTP/1.1\r\nHost: a.test\r\n\r\n")
    }

    /// NIO's encoder would drop Content-Length from a TRACE and send its body raw; the proxy's
    /// own framing keeps it.
    func testTraceBodyKeepsItsLength() throws {
        let harness = try EngineHarness()
        try harness.clientSends("TRACE http://a.test/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc")
        XCTAssertEqual(try harness.originReceived(), "TRACE /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc")
    }

    /// A POST without a body says so with `Content-Length: 0`; a GET without one carries neither.
    func testBodylessRequestsAreFramedByMethod() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(), "POST /p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n")
    }

    /// A transfer coding other than chunked alone is refused before any connection is opened,
    /// and the attempt is recorded with its reason.
    func testUnsupportedTransferCodingIs501() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 501 Not Implemented\r\n"), answer)
        XCTAssertTrue(answer.contains("transfer coding 'gzip, chunked' is not supported"), answer)
        XCTAssertTrue(answer.contains("Connection: close"), answer)
        XCTAssertEqual(harness.connector.connects.count, 0)
        XCTAssertFalse(harness.client.isActive)
        XCTAssertEqual(harness.sink.flows.first?.error?.contains("gzip, chunked"), true)
    }

    /// A bad chunk after the head is answered 400 (not a bare close) while nothing of the
    /// response was sent; the upstream connection, holding half a request, is closed.
    func testMalformedChunkAfterTheHeadIs400() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.clientSends("FFFFFFFFFFFFFFFFFFFF1\r\nx\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
        XCTAssertTrue(answer.contains("invalid chunk size"), answer)
        XCTAssertFalse(upstream.isActive)
        XCTAssertFalse(harness.client.isActive)
    }

    // MARK: responses

    /// An origin's `Transfer-Encoding: gzip` (read until close) is refused: 502, connection closed.
    func testResponseTransferCodingOtherThanChunkedIs502() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("transfer coding 'gzip'"), answer)
        XCTAssertFalse(upstream.isActive)
    }

    /// `Connection: Content-Length` from the origin does not strip the response's length, and
    /// `Transfer-Encoding: Chunked` reaches the client as the one header `chunked`.
    func testResponseFramingIsTheProxysOwn() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nConnection: Content-Length\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        try harness.clientSends("GET http://a.test/y HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 1, "both responses were framed: the connection was reused")
    }

    /// The common `Connection: keep-alive` (dropped in place with the other fixed hop-by-hop
    /// fields) and the same list naming a framing field too (the full filter, which ignores that
    /// token) leave the length and the end-to-end fields as they were, in order.
    func testKeepAliveResponsesKeepTheirFraming() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nProxy-Connection: Keep-Alive\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(), "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nServer: o\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
                                + "Content-Length: 2\r\nETag: e\r\n\r\nok")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 OK\r\nServer: o\r\nContent-Length: 2\r\nETag: e\r\n\r\nok")
        try harness.clientSends("GET http://a.test/y HTTP/1.1\r\nHost: a.test\r\n\r\n")
        _ = try harness.originReceived()
        try harness.originSends("HTTP/1.1 200 OK\r\nConnection: keep-alive, Content-Length, X-Hop\r\nX-Hop: 1\r\n"
                                + "Content-Length: 2\r\n\r\nok")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(harness.connector.connects.count, 1, "both responses were framed: the connection was reused")
    }

    /// A body read until the origin closed never goes back to the pool.
    func testBodyUntilCloseIsNeverPooled() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 200 OK\r\n\r\nall of it")
        upstream.pipeline.fireChannelInactive()
        harness.loop.run()
        XCTAssertTrue(try harness.clientReceived().hasSuffix("all of it\r\n0\r\n\r\n"))
        try harness.clientSends("GET http://a.test/y HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 2)
    }

    /// Status codes below 100 are not interim responses: 502.
    func testStatusBelow100Is502() throws {
        for status in ["000", "099"] {
            let harness = try EngineHarness()
            try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
            try harness.originSends("HTTP/1.1 \(status) Odd\r\nContent-Length: 2\r\n\r\nhi")
            let answer = try harness.clientReceived()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), "\(status): \(answer)")
            XCTAssertTrue(answer.contains("is not an HTTP status code"), answer)
            XCTAssertEqual(harness.sink.flows.first?.error?.contains("not an HTTP status code"), true)
        }
    }

    /// Interim responses lose their hop-by-hop fields, and past 32 of them the origin is cut
    /// off with a 502.
    func testInterimResponsesAreFilteredAndCapped() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 100 Continue\r\nLink: </a.css>\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
                                + "Keep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 100 Continue\r\nLink: </a.css>\r\n\r\n")
        try harness.originSends(String(repeating: "HTTP/1.1 102 Processing\r\n\r\n", count: 40))
        let answer = try harness.clientReceived()
        XCTAssertEqual(answer.components(separatedBy: "HTTP/1.1 102 Processing\r\n").count - 1, 31)
        XCTAssertTrue(answer.contains("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("more than 32 interim (1xx) responses"), answer)
        XCTAssertFalse(upstream.isActive)
    }

    /// Trailers lose the fields RFC 9110 §6.5.1 keeps out of them (framing, routing, auth,
    /// cookies) on both sides; a trailer section with nothing left is an empty one.
    func testForbiddenTrailerFieldsAreDropped() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                                + "2\r\nhi\r\n0\r\nX-Sum: 1\r\nHost: evil.test\r\nAuthorization: x\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(),
                       "POST /x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n")
        // (A Content-Length in response trailers never gets here: NIO's parser refuses the
        // response, which is then cut and recorded with the error.)
        try harness.originSends("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
                                + "Set-Cookie: a=b\r\nX-Checksum: 9\r\nWWW-Authenticate: Basic\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(),
                       "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Checksum: 9\r\n\r\n",
                       "\(harness.sink.flows.map { $0.error ?? "-" })")
    }

    /// What the HTTP parser refuses before the proxy's own framing rules see the request gets a
    /// 400 naming the actual problem: a duplicate Content-Length used to read "where no body is
    /// allowed, or beside Transfer-Encoding", and Transfer-Encoding problems "malformed message".
    func testParserRefusalsNameTheProblem() throws {
        let cases: [(String, String)] = [
            ("Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "more than one Content-Length"),
            ("Content-Length: 0\r\nContent-Length: 3\r\n\r\nabc", "more than one Content-Length"),
            ("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "never beside Content-Length"),
            ("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", "never beside Transfer-Encoding"),
            ("Transfer-Encoding: chunked, identity\r\n\r\n", "invalid Transfer-Encoding"),
            ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "invalid Transfer-Encoding"),
        ]
        for (tail, reason) in cases {
            let harness = try EngineHarness()
            try harness.clientSends("POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\n" + tail)
            let answer = try harness.clientReceived()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
            XCTAssertTrue(answer.contains(reason), "\(tail): \(answer)")
            XCTAssertEqual(harness.connector.connects.count, 0)
        }
        for (request, reason) in [("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/2"),
                                  ("GET http://a.test/ http/1.1\r\nHost: a.test\r\n\r\n", "HTTP/1.x"),
                                  ("POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   + "3;\r\nabc\r\n0\r\n\r\n", "invalid chunk extension")] {
            let harness = try EngineHarness()
            try harness.clientSends(request)
            let answer = try harness.clientReceived()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
            XCTAssertTrue(answer.contains(reason), "\(request): \(answer)")
        }
    }
}

/// The origin's reason phrases survive NIO's decoder (`StatusLineTap`).
final class ReasonPhraseTests: XCTestCase {
    /// A custom phrase on a final response, and on interim ones before it, reach the client and
    /// the flow; a 103 NIO has no name for keeps the origin's.
    func testOriginPhrasesAreKept() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 Totally Fine\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(try harness.clientReceived(),
                       "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 Totally Fine\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(harness.sink.flows.first?.reason, "Totally Fine")
        // The next exchange on the same connection reads its own status line, split across reads.
        try harness.clientSends("GET http://a.test/y HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 404 Nope")
        try harness.originSends(" Nope\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 404 Nope Nope\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 1)
    }

    /// Control bytes in a phrase are not passed on: the phrase is left empty.
    func testHostilePhrasesAreDropped() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 A\u{1B}[2JB\r\nContent-Length: 0\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertFalse(answer.contains("\u{1B}"), answer)
    }
}
