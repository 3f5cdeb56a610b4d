import NIOCore
import NIOEmbedded
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// Exchanges end cleanly on every path a review found unsafe: no exchange outlives its client,
/// no connection is reused or left hanging in a broken state, and a stalled body times out.
final class ExchangeLifecycleTests: XCTestCase {
    /// A malformed request body mid-exchange closes the client and ends the exchange: the
    /// upstream connection is closed and the flow recorded, so nothing calls the gone client.
    func testMalformedBodyMidExchangeEndsTheExchange() throws {
        let harness = try EngineHarness()
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.clientSends("zz\r\n")
        XCTAssertFalse(harness.client.isActive)
        XCTAssertFalse(upstream.isActive, "the upstream connection is not left running")
        XCTAssertEqual(harness.sink.flows.count, 1)
        XCTAssertTrue(harness.sink.flows.first?.error?.hasPrefix("bad request: malformed request: ") ?? false)
    }

    /// A 101 for a request that did not ask to upgrade is a 502, and that connection is not reused.
    func testUnrequestedSwitchingProtocolsIs502() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("did not ask to upgrade"))
        XCTAssertFalse(upstream.isActive)
        try harness.clientSends("GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 2, "a fresh connection, not the broken one")
    }

    /// A 101 that arrives while the upgrade request's body is still coming is refused: the bytes
    /// that follow would be HTTP body, not the new protocol.
    func testSwitchingProtocolsBeforeTheBodyEndedIs502() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://ws.test/ HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 100\r\n\r\nabc")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), answer)
        XCTAssertTrue(answer.contains("before the request body ended"))
        XCTAssertFalse(upstream.isActive)
        XCTAssertFalse(harness.client.isActive)
    }

    /// A request replayed on a fresh connection (the pooled one was stale) is ended there too,
    /// including the terminator of an empty chunked body, and its response is then awaited.
    func testRetriedRequestIsEnded() throws {
        let harness = try EngineHarness { $0.upstreamTimeout = .seconds(5) }
        let first = try harness.pooledConnectionAfterOneExchange()

        // A safe method with an empty chunked body: retried (a POST would not be: PoolSafetyTests).
        try harness.clientSends("GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        first.pipeline.fireChannelInactive()
        XCTAssertEqual(harness.connector.connects.count, 2)
        let sent = try harness.originReceived()
        XCTAssertTrue(sent.hasPrefix("GET /2 HTTP/1.1\r\n"), sent)
        XCTAssertTrue(sent.hasSuffix("\r\n\r\n0\r\n\r\n"), "the empty chunked body is terminated: \(sent)")
        harness.loop.advanceTime(by: .seconds(6))
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"),
                      "a silent origin times out on the retried connection too")
    }

    /// The next pipelined request's own pause (its connection is still being opened) survives
    /// the end of the previous response: its body is not read into memory meanwhile.
    func testPipelinedRequestKeepsItsConnectPause() throws {
        let harness = try EngineHarness()
        try harness.clientSends(
            "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"
                + "POST http://b.test/ HTTP/1.1\r\nHost: b.test\r\nContent-Length: 1000000\r\n\r\nxyz")
        harness.connector.holdConnects = true
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.map(\.host), ["a.test", "b.test"])
        let before = harness.clientReads.reads
        harness.client.read()
        XCTAssertEqual(harness.clientReads.reads, before, "reads wait for b.test's connection")
        harness.connector.completePendingConnect()
        harness.loop.run()
        XCTAssertGreaterThan(harness.clientReads.reads, before, "the held read goes out once connected")
    }

    /// A request body that stops arriving is answered 408 after the idle timeout, and closed.
    func testStalledRequestBodyTimesOut() throws {
        let harness = try EngineHarness { $0.clientIdleTimeout = .seconds(5) }
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\nabc")
        harness.loop.advanceTime(by: .seconds(3))
        try harness.clientSends("d")
        harness.loop.advanceTime(by: .seconds(4))
        XCTAssertTrue(harness.client.isActive, "the body still moved 4 s ago")
        harness.loop.advanceTime(by: .seconds(2))
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("the request body stalled for 5s\n"))
        XCTAssertFalse(harness.client.isActive)
        XCTAssertFalse(harness.upstream!.isActive)
    }

    /// An origin that stops reading the request body is a 504 naming it.
    func testOriginThatStopsReadingTheBodyIs504() throws {
        let harness = try EngineHarness { $0.clientIdleTimeout = .seconds(5) }
        try harness.clientSends("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\nab")
        let upstream = try XCTUnwrap(harness.upstream)
        upstream.isWritable = false
        try harness.clientSends("c")  // reads are now held for the origin
        harness.loop.advanceTime(by: .seconds(6))
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"), answer)
        XCTAssertTrue(answer.hasSuffix("a.test:80 stopped reading the request body for 5s\n"))
    }
}
