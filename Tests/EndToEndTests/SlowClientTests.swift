import Foundation
import ProxyModel
import XCTest

/// Slow clients must not be mistaken for silent origins: the upstream timeout is about an
/// origin that does not answer, not about a client that reads or uploads slowly.
///
/// KNOWN BUG, both tests (Sources/ProxyEngine/Upstream/UpstreamHTTPHandler.swift,
/// `installPipeline` installs `IdleStateHandler(allTimeout: upstreamTimeout)`, and
/// `userInboundEventTriggered` fails the exchange with `UpstreamTimeoutError` on any idle
/// event): the timer runs whenever the upstream channel is quiet, including while
/// back-pressure holds upstream reads (`pauseReads()`, slow reader) and while the origin is
/// legitimately waiting for the rest of the request body (slow uploader). The client gets a
/// 504 or a cut-off body, and the flow blames the origin ("… sent nothing for 1s").
final class SlowClientTests: XCTestCase {
    /// A client that pauses reading for longer than the upstream timeout still gets the whole
    /// body: the origin is not silent, the proxy is holding it back. Fails because of the known
    /// bug above: the body is cut off and the flow says "… sent nothing for 1s (response
    /// incomplete)"; with the default 60 s, any download whose client stalls a minute is cut.
    func testSlowReaderIsNotCutOffByUpstreamTimeout() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let size = 64 << 20
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/\(size)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            // Stop reading for three upstream timeouts, while back-pressure holds the origin.
            _ = try await BackPressureTests.settledStreamedBytes(origin)
            try await Task.sleep(nanoseconds: 3_000_000_000)
            let head = try client.readResponse(noBody: true)
            XCTAssertEqual(head.header("Content-Length"), String(size))
            let received = try client.drain(count: size, timeout: 30)
            XCTAssertEqual(received, size, "the body was cut off (peer closed: \(client.peerClosed))")
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertNil(flow?.error)
            XCTAssertEqual(flow?.responseBody.size, Int64(size))
        }
    }

    /// A client that pauses mid-upload for longer than the upstream timeout still gets the
    /// origin's answer once the body is complete. Fails because of the known bug above: the
    /// proxy answers 504 "sent nothing" while the origin is waiting for the body.
    func testSlowUploaderIsNotAnsweredWithUpstreamTimeout() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("POST \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\n"
                            + "Content-Length: 10\r\n\r\nhello")
            try await Task.sleep(nanoseconds: 2_500_000_000)
            try? client.send("world")  // fails only if the proxy already gave up and closed
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200, response.bodyText)
            XCTAssertEqual(response.bodyText, "helloworld")
        }
    }
}
