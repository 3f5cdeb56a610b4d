import NIOCore
import NIOEmbedded
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The shared upstream pool never carries one client's state to another, and never makes an
/// origin run a request twice.
final class PoolSafetyTests: XCTestCase {
    /// A connection that carried `Authorization: NTLM` is this client's alone from then on: its
    /// next request reuses it, another client's request gets a connection of its own.
    func testNTLMLoginKeepsTheConnectionPrivate() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/login HTTP/1.1\r\nHost: a.test\r\nAuthorization: NTLM TlRMTVNTUAAB\r\n\r\n")
        let logged = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        _ = try harness.clientReceived()

        let other = try harness.makeClient()
        try harness.send("GET http://a.test/me HTTP/1.1\r\nHost: a.test\r\n\r\n", from: other)
        XCTAssertEqual(harness.connector.connects.count, 2, "another client never gets the logged-in connection")
        XCTAssertTrue(try harness.originReceived(on: harness.connector.channels[1]).hasPrefix("GET /me "))
        XCTAssertEqual(try harness.originReceived(on: logged), "GET /login HTTP/1.1\r\nHost: a.test\r\nAuthorization: NTLM TlRMTVNTUAAB\r\n\r\n")

        try harness.clientSends("GET http://a.test/me HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 2, "the logged-in client keeps its own connection")
        XCTAssertTrue(try harness.originReceived(on: logged).hasPrefix("GET /me "))
    }

    /// A `WWW-Authenticate: Negotiate` challenge binds the connection too (the handshake that
    /// follows runs on it), and the private connection closes with its client.
    func testNegotiateChallengeBindsAndClosesWithTheClient() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let upstream = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=x, Negotiate\r\nContent-Length: 0\r\n\r\n")
        _ = try harness.clientReceived()
        let other = try harness.makeClient()
        try harness.send("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", from: other)
        XCTAssertEqual(harness.connector.connects.count, 2)
        XCTAssertTrue(upstream.isActive)
        _ = try harness.client.close().wait()
        harness.loop.run()
        XCTAssertFalse(upstream.isActive, "a private connection ends with its client")
    }

    /// A POST (or DELETE) whose pooled connection turns out closed is not sent again: the origin
    /// may have run it. The client gets a 502.
    func testUnsafeMethodsAreNotRetried() throws {
        for method in ["POST", "DELETE", "PATCH", "PURGE"] {
            let harness = try EngineHarness()
            let first = try harness.pooledConnectionAfterOneExchange()
            try harness.clientSends("\(method) http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
            first.pipeline.fireChannelInactive()
            XCTAssertEqual(harness.connector.connects.count, 1, "\(method) is not retried")
            XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), method)
        }
    }

    /// Once an interim response reached the client, not even a GET is sent again.
    func testNoRetryAfterAnInterimResponseWasRelayed() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        _ = try harness.clientReceived()
        let first = try XCTUnwrap(harness.upstream)
        try harness.clientSends("GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 102 Processing\r\n\r\n", on: first)
        first.pipeline.fireChannelInactive()
        XCTAssertEqual(harness.connector.connects.count, 1)
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 502 Bad Gateway\r\n"), answer)
    }
    /// Bytes an origin sent past the end of its response, in the same read (a body longer than
    /// its Content-Length, a HEAD or 204 answered with a body), put the connection's framing in
    /// doubt: it is closed, never handed to the next request. A request pipelined behind took
    /// it before those bytes were decoded, and got them as its answer (here a whole second
    /// response, `POISON`) while its own POST ran at the origin.
    func testBytesPastTheResponseKeepTheConnectionOutOfThePool() throws {
        for (method, response) in [("GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
                                   ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"),
                                   ("GET", "HTTP/1.1 204 No Content\r\n\r\n")] {
            let harness = try EngineHarness()
            try harness.clientSends("\(method) http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n"
                                    + "POST http://a.test/2 HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx")
            let first = try XCTUnwrap(harness.upstream)
            try harness.originSends(response + "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nPOISON")
            XCTAssertFalse(first.isActive, "\(response): the connection whose framing is in doubt is closed")
            XCTAssertEqual(try harness.originReceived(on: first).components(separatedBy: "POST").count, 1,
                           "\(response): the POST never went out on it")
            XCTAssertEqual(harness.connector.connects.count, 2, response)
            XCTAssertTrue(try harness.originReceived().hasPrefix("POST /2 HTTP/1.1\r\n"), response)
            try harness.originSends("HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nmine")
            let answers = try harness.clientReceived()
            XCTAssertFalse(answers.contains("POISON"), answers)
            XCTAssertTrue(answers.hasSuffix("HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nmine"), answers)
        }
    }

    /// The same bytes arriving in a later read, after the connection went back to the pool idle,
    /// close it too (nobody asked): the next request gets a new connection.
    func testAnIdlePooledConnectionThatTalksIsClosed() throws {
        let harness = try EngineHarness()
        try harness.clientSends("GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        let first = try XCTUnwrap(harness.upstream)
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertTrue(first.isActive)
        try harness.originSends("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nPOISON", on: first)
        XCTAssertFalse(first.isActive)
        try harness.clientSends("GET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        XCTAssertEqual(harness.connector.connects.count, 2)
    }
}
