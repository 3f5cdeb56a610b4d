import Foundation
import ProxyModel
import XCTest

/// Slow clients must not be mistaken for silent origins: the upstream timeout is about an
/// origin that does not answer, not about a client that reads or uploads slowly.
///
/// Regression guard, both tests: the upstream timeout once ran whenever the upstream channel
/// was quiet, including while back-pressure held upstream reads (slow reader) and while the
/// origin was waiting for the rest of the request body (slow uploader), so the client got a
/// 504 or a cut-off body blamed on the origin. It now runs only while a response is awaited
/// and reading is allowed.
final class SlowClientTests: XCTestCase {
    /// A client that pauses reading for longer than the upstream timeout still gets the whole
    /// body: the origin is not silent, the proxy is holding it back.
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
    /// origin's answer once the body is complete.
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
