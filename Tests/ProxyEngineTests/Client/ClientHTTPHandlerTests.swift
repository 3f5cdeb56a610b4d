import NIOCore
import NIOEmbedded
import NIOHTTP1
import ProxyCore
import ProxyModel
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The client pipeline as transcripts: bytes a client sends → what the origin gets → what the
/// client gets back → the flow recorded. No sockets.
final class ClientHTTPHandlerTests: XCTestCase {
    /// An absolute-form GET becomes an origin-form request with Host set and hop-by-hop headers
    /// gone; the response comes back; the flow has the exchange.
    func testForwardsGetAndRecordsFlow() throws {
        let harness = try EngineHarness()
        try harness.clientSends(
            "GET http://Example.test:8081/a?b=1 HTTP/1.1\r\nHost: wrong.test\r\nProxy-Connection: keep-alive\r\n"
                + "Connection: X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n"
                + "Accept: text/html\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map { "\($0.host):\($0.port)" }, ["example.test:8081"])
        XCTAssertEqual(try harness.originReceived(),
                       "GET /a?b=1 HTTP/1.1\r\nHost: example.test:8081\r\nAccept: */*\r\nAccept: text/html\r\n\r\n")

        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\nX-Kept: y\r\n\r\nhello")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Kept: y\r\n\r\nhello")

        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.kind, .http)
        XCTAssertEqual(flow.clientAddress, "127.0.0.1:50000")
        XCTAssertEqual(flow.method, "GET")
        XCTAssertEqual(flow.host, "example.test")
        XCTAssertEqual(flow.port, 8081)
        XCTAssertEqual(flow.path, "/a?b=1")
        XCTAssertEqual(flow.status, 200)
        XCTAssertEqual(flow.reason, "OK")
        XCTAssertEqual(flow.requestHeaders.filter { $0.name == "Accept" }.map(\.value), ["*/*", "text/html"])
        XCTAssertEqual(flow.responseBody.bytes, Data("hello".utf8))
        XCTAssertEqual(flow.timings.dns, 1.5)
        XCTAssertGreaterThanOrEqual(flow.timings.wait, 0)
        XCTAssertNil(flow.error)
        XCTAssertTrue(harness.client.isActive)
    }

    /// The second request to the same origin reuses the pooled upstream connection.
    func testKeepAliveReusesUpstreamConnection() throws {
        let harness = try EngineHarness()
        for index in 0..<3 {
            try harness.clientSends("GET http://a.test/\(index) HTTP/1.1\r\nHost: a.test\r\n\r\n")
            XCTAssertEqual(try harness.originReceived(), "GET /\(index) HTTP/1.1\r\nHost: a.test\r\n\r\n")
            try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n\(index)")
            XCTAssertTrue(try harness.clientReceived().hasSuffix("\r\n\r\n\(index)"))
        }
        XCTAssertEqual(harness.connector.connects.count, 1)
        XCTAssertEqual(harness.sink.flows.map(\.timings.connect), [0.5, -1, -1])
    }

    /// A pooled connection the origin closed is replaced transparently for a body-less request.
    func testStalePooledConnectionIsRetriedOnce() throws {
        let harness = try EngineHarness()
        let first = try harness.pooledConnectionAfterOneExchange()

        try harness.clientSends("GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        first.pipeline.fireChannelInactive()  // the origin had closed it
        XCTAssertEqual(harness.connector.connects.count, 2)
        XCTAssertEqual(try harness.originReceived(), "GET /2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 204 No Content"))
        XCTAssertNil(harness.sink.flows.last?.error)
    }

    /// Requests for the proxy itself get its page, and the connection stays usable.
    func testOriginFormGetsBuiltInPage() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET / HTTP/1.1\r\nHost: proxy\r\n\r\n")
        let page = try harness.clientReceived()
        XCTAssertTrue(page.hasPrefix("HTTP/1.1 200 OK\r\n"), page)
        XCTAssertTrue(page.contains("ProxyApp is running"))
        try harness.clientSends("GET /nope HTTP/1.1\r\nHost: proxy\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        XCTAssertTrue(harness.connector.connects.isEmpty)
        XCTAssertTrue(harness.client.isActive)
    }

    /// A connect failure is a 502 with the reason in the body and in Proxy-Status.
    func testConnectFailureAnswers502() throws {
        let harness = try EngineHarness()
        harness.connector.failure = ProxyFailure.connectionRefused(host: "a.test", port: 80)
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("Proxy-Status: ProxyApp; error=connection_refused;"))
        XCTAssertTrue(answer.hasSuffix("\r\n\r\nconnection refused by a.test:80\n"))
        XCTAssertEqual(harness.sink.flows.first?.error, "connection refused by a.test:80")
        XCTAssertNil(harness.sink.flows.first?.status)
    }

    /// The origin closing mid-body: the client connection is closed, never completed.
    func testUpstreamCloseMidResponseClosesClient() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
        harness.upstream!.pipeline.fireChannelInactive()  // EOF mid-body
        XCTAssertFalse(harness.client.isActive)
        let flow = try XCTUnwrap(harness.sink.flows.first)
        XCTAssertEqual(flow.status, 200)
        XCTAssertEqual(flow.responseBody.bytes, Data("half".utf8))
        XCTAssertEqual(flow.error, "a.test:80 closed the connection before a complete response (response incomplete)")
    }

    /// The origin closing before answering a request with a body: 502.
    func testUpstreamCloseBeforeResponseAnswers502() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\n\r\nhi")
        harness.upstream!.pipeline.fireChannelInactive()
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertEqual(harness.connector.connects.count, 1)
        XCTAssertEqual(harness.sink.flows.first?.requestBody.bytes, Data("hi".utf8))
    }

    /// Garbage is a 400 and the connection closes.
    func testMalformedRequestAnswers400AndCloses() throws {
        let harness = try EngineHarness()
        try harness.clientSends("BLAH\u{1}\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), answer)
        XCTAssertTrue(answer.contains("Connection: close"))
        XCTAssertFalse(harness.client.isActive)
    }

    /// A header section over the limit is a 431.
    func testOversizedHeadersAnswer431() throws {
        let harness = try EngineHarness()
        let big = String(repeating: "x", count: 70 * 1024)
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nX-Big: \(big)\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("request header section is larger than 64 KiB\n"))
        XCTAssertFalse(harness.client.isActive)
    }

    /// An invalid target is a 400 naming the problem.
    func testInvalidTargetAnswers400() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET ftp://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasSuffix("bad request: unsupported URL scheme 'ftp'\n"))
    }

    /// An HTTP/1.0 client gets an unchunked body and a close when the length is unknown.
    func testHTTP10ClientGetsUnchunkedBody() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/ HTTP/1.0\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(), "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nabc")
        XCTAssertFalse(harness.client.isActive)
    }

    /// The origin's 100 Continue reaches the client before the final response.
    func testExpectContinueIsRelayed() throws {
        let harness = try EngineHarness()
        try harness.clientSends("PUT http://a.test/u HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        XCTAssertTrue(try harness.originReceived().contains("Expect: 100-continue\r\n"))
        try harness.originSends("HTTP/1.1 100 Continue\r\n\r\n")
        XCTAssertEqual(try harness.clientReceived(), "HTTP/1.1 100 Continue\r\n\r\n")
        try harness.clientSends("abc")
        XCTAssertEqual(try harness.originReceived(), "abc")
        try harness.originSends("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 201 Created\r\n"))
        XCTAssertEqual(harness.sink.flows.first?.status, 201)
        XCTAssertEqual(harness.sink.flows.first?.requestBody.size, 3)
    }

    /// A slow client pauses reading from the origin; a slow origin pauses reading from the client.
    func testBackPressureBothWays() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nab")
        let upstream = try XCTUnwrap(harness.upstream)
        let upstreamReads = try upstream.pipeline.syncOperations.handler(type: ReadCounter.self)

        // Origin not writable → the next client read is held until it is writable again.
        upstream.isWritable = false
        upstream.pipeline.fireChannelWritabilityChanged()
        try harness.clientSends("c")
        let clientReadsBefore = harness.clientReads.reads
        harness.client.read()
        XCTAssertEqual(harness.clientReads.reads, clientReadsBefore)
        upstream.isWritable = true
        upstream.pipeline.fireChannelWritabilityChanged()
        XCTAssertEqual(harness.clientReads.reads, clientReadsBefore + 1)
        try harness.clientSends("d")
        XCTAssertTrue(try harness.originReceived().hasSuffix("abcd"))

        // Client not writable → reads from the origin are held.
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nxy")
        harness.client.isWritable = false
        try harness.originSends("z")
        let upstreamReadsBefore = upstreamReads.reads
        upstream.read()
        XCTAssertEqual(upstreamReads.reads, upstreamReadsBefore)
        harness.client.isWritable = true
        harness.client.pipeline.fireChannelWritabilityChanged()
        XCTAssertEqual(upstreamReads.reads, upstreamReadsBefore + 1)
        try harness.originSends("w")
        XCTAssertTrue(try harness.clientReceived().hasSuffix("xyzw"))
    }

    /// A client that leaves while its upstream connection is still being opened: when the
    /// connect completes later, the new connection is closed and nothing touches the gone client.
    func testClientLeavingDuringConnectIsSafe() throws {
        var harness: EngineHarness? = try EngineHarness()
        let connector = harness!.connector
        connector.holdConnects = true
        try harness!.clientSends("GET http://slow.test/ HTTP/1.1\r\nHost: slow.test\r\n\r\n")
        weak let handler = try harness!.client.pipeline.syncOperations.handler(type: ClientHTTPHandler.self)
        XCTAssertNotNil(handler)
        try harness!.client.close().wait()
        let sink = harness!.sink
        let loop = harness!.loop
        harness = nil  // the client channel and its handlers can be deallocated now
        loop.run()  // drops the cancelled idle timer (it holds its handler)
        XCTAssertNil(handler, "the client's handler is gone before the connect completes")
        let upstream = connector.completePendingConnect()
        loop.run()
        XCTAssertFalse(upstream.isActive, "a connection nobody will use is closed")
        XCTAssertEqual(sink.flows.first?.error, "client closed the connection before the exchange completed")
    }

    /// An origin that fails while it was holding the client back (mid-upload) gets a 502, and
    /// the client connection reads again: the rest of the body is drained and the next request
    /// is served.
    func testFailureDuringBackPressureResumesClientReads() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nab")
        let upstream = try XCTUnwrap(harness.upstream)
        upstream.isWritable = false
        upstream.pipeline.fireChannelWritabilityChanged()
        try harness.clientSends("c")  // holds client reads: the origin is not writable
        upstream.pipeline.fireChannelInactive()  // ... and then goes away
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        let before = harness.clientReads.reads
        harness.client.read()
        XCTAssertEqual(harness.clientReads.reads, before + 1, "client reads must not stay paused")
        try harness.clientSends("d")
        try harness.clientSends("GET / HTTP/1.1\r\nHost: p\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    /// A connection idle between requests for the idle timeout is closed; a busy one is not,
    /// and the clock restarts when it becomes idle again.
    func testIdleClientConnectionIsClosed() throws {
        let harness = try EngineHarness { $0.clientIdleTimeout = .seconds(5) }
        harness.loop.advanceTime(by: .seconds(3))
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        harness.loop.advanceTime(by: .seconds(6))
        XCTAssertTrue(harness.client.isActive, "an exchange in flight is not idle")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        harness.loop.advanceTime(by: .seconds(4))
        XCTAssertTrue(harness.client.isActive, "idle for 4 s only")
        harness.loop.advanceTime(by: .seconds(2))
        XCTAssertFalse(harness.client.isActive)
    }

    /// Pipelined requests behind a forwarded response and behind a local error are all answered,
    /// in order.
    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let harness = try EngineHarness()
        harness.connector.failure = nil
        try harness.clientSends(
            "GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET /nope HTTP/1.1\r\nHost: p\r\n\r\n"
                + "GET http://a.test/3 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(try harness.originReceived(), "GET /1 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1")
        XCTAssertEqual(try harness.originReceived(), "GET /3 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n3")
        let answers = try harness.clientReceived()
        let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
        XCTAssertEqual(statuses, ["200", "404", "200"])
        XCTAssertTrue(answers.hasSuffix("\r\n\r\n3"))
    }

    /// The origin timeout runs only while a response is awaited: not while the client reads
    /// slowly.
    func testUpstreamTimeoutSparesSlowClients() throws {
        let harness = try EngineHarness { $0.upstreamTimeout = .seconds(5) }
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab")
        harness.client.isWritable = false
        try harness.originSends("c")  // pauses reading from the origin
        harness.loop.advanceTime(by: .seconds(20))
        XCTAssertTrue(harness.upstream!.isActive)
        harness.client.isWritable = true
        harness.client.pipeline.fireChannelWritabilityChanged()
        harness.loop.advanceTime(by: .seconds(6))
        let answer = try harness.clientReceived()
        XCTAssertFalse(harness.client.isActive, "the origin went silent with reading allowed: \(answer)")
        XCTAssertEqual(harness.sink.flows.first?.error, "a.test:80 sent nothing for 5s (response incomplete)")
    }

    /// An origin that never answers gets a 504.
    func testSilentOriginAnswers504() throws {
        let harness = try EngineHarness { $0.upstreamTimeout = .seconds(5) }
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        harness.loop.advanceTime(by: .seconds(6))
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("a.test:80 sent nothing for 5s\n"))
    }

    /// https:// in absolute-form is refused with a pointer to CONNECT.
    func testAbsoluteHTTPSIsNotImplemented() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 501 Not Implemented\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("https:// URLs must be requested through CONNECT\n"))
    }
}
