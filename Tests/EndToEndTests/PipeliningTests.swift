import Foundation
import ProxyModel
import XCTest

/// Pipelined requests (several sent before the first answer) are answered in order, each with
/// its own response, on one client connection.
///
/// Regression guard: NIO's `HTTPServerPipelineHandler` hands the buffered next request to
/// `ClientHTTPHandler` from inside the `write(.end)` of the previous response, so the handler's
/// state must be final before that write (`completeResponse`), or the next request is dropped
/// with the connection left open. A correct proxy answers within milliseconds on loopback, so
/// the reads here wait at most `responseTimeout`.
final class PipeliningTests: XCTestCase {
    static let responseTimeout: TimeInterval = 5

    /// Three GETs in one write: three responses, in request order, bodies intact.
    func testThreePipelinedGetsAreAnsweredInOrder() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let sizes = [300, 10, 2000]
            let requests = sizes.map { "GET \(origin.url("/bytes/\($0)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n" }
            try client.send(requests.joined())
            for size in sizes {
                let response = try client.readResponse(timeout: Self.responseTimeout)
                XCTAssertEqual(response.status, 200)
                XCTAssertEqual(response.header("X-Origin-URI"), "/bytes/\(size)")
                XCTAssertEqual(response.body, PatternBytes.data(count: size))
            }
            XCTAssertTrue(client.pending.isEmpty)
            XCTAssertEqual(origin.log.requests.map(\.uri), sizes.map { "/bytes/\($0)" })
            let flows = try await proxy.waitForFlows(count: 3)
            XCTAssertEqual(flows.map(\.path), sizes.map { "/bytes/\($0)" })
        }
    }

    /// A pipeline mixing a HEAD, a POST with a body and a chunked response keeps its framing.
    func testPipelineWithHeadPostAndChunkedResponse() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let host = "Host: \(origin.authority)\r\n"
            try client.send("HEAD \(origin.url("/bytes/4000")) HTTP/1.1\r\n\(host)\r\n"
                            + "POST \(origin.url("/echo")) HTTP/1.1\r\n\(host)Content-Length: 5\r\n\r\nabcde"
                            + "GET \(origin.url("/chunked/70000")) HTTP/1.1\r\n\(host)\r\n")
            let head = try client.readResponse(noBody: true, timeout: Self.responseTimeout)
            XCTAssertEqual(head.status, 200)
            XCTAssertEqual(head.header("Content-Length"), "4000")
            let post = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(post.header("X-Origin-URI"), "/echo")
            XCTAssertEqual(post.bodyText, "abcde")
            let chunked = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(chunked.header("X-Origin-URI"), "/chunked/70000")
            XCTAssertEqual(chunked.body, PatternBytes.data(count: 70000))
            XCTAssertTrue(client.pending.isEmpty)
        }
    }

    /// A request pipelined behind one the proxy answers itself with an error found
    /// synchronously (an `.invalid` host fails before the first request is even complete) is
    /// answered.
    func testRequestPipelinedAfterImmediateErrorAnswerIsAnswered() async throws {
        try await Fixture.run { proxy, origin in
            try self.assertAnsweredAfter502(
                "GET http://no-such-host.invalid/ HTTP/1.1\r\nHost: no-such-host.invalid\r\n\r\n",
                proxy: proxy, origin: origin)
        }
    }

    /// A request pipelined behind one answered with an error found later (a refused upstream
    /// connection, reported after the first request was read completely) is answered.
    func testRequestPipelinedAfterRefusedConnectionIsAnswered() async throws {
        try await Fixture.run { proxy, origin in
            let closed = try ListeningSocket.refusing()
            defer { closed.close() }
            try self.assertAnsweredAfter502(
                "GET http://127.0.0.1:\(closed.port)/ HTTP/1.1\r\nHost: 127.0.0.1:\(closed.port)\r\n\r\n",
                proxy: proxy, origin: origin)
        }
    }

    /// Sends `failing` and a good request in one write: the first gets a 502, the second its body.
    private func assertAnsweredAfter502(_ failing: String, proxy: ProxyHarness, origin: TestOrigin) throws {
        let client = try RawClient(port: proxy.port)
        try client.send(failing + "GET \(origin.url("/bytes/7")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
        let failure = try client.readResponse(timeout: Self.responseTimeout)
        XCTAssertEqual(failure.status, 502)
        let next = try client.readResponse(timeout: Self.responseTimeout)
        XCTAssertEqual(next.status, 200)
        XCTAssertEqual(next.body, PatternBytes.data(count: 7))
    }

    /// A request pipelined behind one that closes the connection (`Connection: close`, HTTP/1.0
    /// without keep-alive) is never answered, and the closing response still arrives whole. The
    /// parser refuses bytes after such a request, and NIO delivers that refusal from inside the
    /// write of the response's `.end`, before the flush; closing there discarded the response, so
    /// the client got a bare close and no answer.
    func testRequestPipelinedBehindAClosingRequestLeavesItsResponseWhole() async throws {
        try await Fixture.run { proxy, origin in
            for closing in ["HTTP/1.1\r\nConnection: close", "HTTP/1.0"] {
                let client = try RawClient(port: proxy.port)
                defer { client.close() }
                try client.send("POST \(origin.url("/echo")) \(closing)\r\nHost: \(origin.authority)\r\n"
                                + "Content-Length: 5\r\n\r\nabcde"
                                + "GET \(origin.url("/bytes/7")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
                let first = try client.readResponse(timeout: Self.responseTimeout)
                XCTAssertEqual(first.status, 200, closing)
                XCTAssertEqual(first.bodyText, "abcde", closing)
                XCTAssertTrue(try client.readUntilClose(timeout: Self.responseTimeout), closing)
                XCTAssertTrue(client.pending.isEmpty, closing)
            }
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/echo", "/echo"], "the pipelined GETs never left")
        }
    }

    /// Pipelined requests for the proxy's own pages (answered without an upstream) come back
    /// in order.
    func testPipelinedBuiltInPageRequestsAreAnsweredInOrder() async throws {
        try await Fixture.run { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("GET /first HTTP/1.1\r\nHost: proxy\r\n\r\nGET / HTTP/1.1\r\nHost: proxy\r\n\r\n"
                            + "GET /third HTTP/1.1\r\nHost: proxy\r\n\r\n")
            let first = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(first.status, 404)
            XCTAssertTrue(first.bodyText.contains("/first"))
            let second = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(second.status, 200)
            let third = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(third.status, 404)
            XCTAssertTrue(third.bodyText.contains("/third"))
        }
    }

    /// The socket stays readable while a response is awaited (`RequestEndReadAhead`): requests
    /// sent one by one while a large response streams back, and a long pipeline in one write,
    /// are all answered in order and intact, and the connection then serves a plain request.
    func testRequestsArrivingWhileALargeResponseStreamsAreAnsweredInOrder() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            func get(_ path: String) -> String { "GET \(origin.url(path)) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n" }
            try client.send(get("/bytes/3000000"))
            try client.send(get("/bytes/10"))
            try client.send(get("/chunked/5000"))
            let pipeline = (0..<200).map { "/bytes/\($0 % 7)" }
            try client.send(pipeline.map(get).joined())
            let large = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(large.body, PatternBytes.data(count: 3_000_000))
            XCTAssertEqual(try client.readResponse(timeout: Self.responseTimeout).body, PatternBytes.data(count: 10))
            XCTAssertEqual(try client.readResponse(timeout: Self.responseTimeout).body, PatternBytes.data(count: 5000))
            for path in pipeline {
                let response = try client.readResponse(timeout: Self.responseTimeout)
                XCTAssertEqual(response.header("X-Origin-URI"), path)
            }
            try client.send(get("/bytes/5"))
            XCTAssertEqual(try client.readResponse(timeout: Self.responseTimeout).body, PatternBytes.data(count: 5))
            XCTAssertTrue(client.pending.isEmpty)
            XCTAssertEqual(origin.log.requests.count, 204)
        }
    }

    /// A client that ends its side right after its request (a read ahead sees the FIN while
    /// the response is awaited) still gets the whole response, then the connection closes.
    func testHalfCloseAfterTheRequestStillGetsTheResponse() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/200000")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            client.shutdownWrite()
            let response = try client.readResponse(timeout: Self.responseTimeout)
            XCTAssertEqual(response.body, PatternBytes.data(count: 200_000))
            XCTAssertTrue(try client.readUntilClose(timeout: Self.responseTimeout), "the proxy closes after answering")
        }
    }
}
