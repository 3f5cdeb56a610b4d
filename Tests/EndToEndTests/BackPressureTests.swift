import Foundation
import ProxyModel
import XCTest

/// Back-pressure: a client that does not read must make the proxy stop reading from the
/// origin (bounded memory), and must not be mistaken for a silent origin.
final class BackPressureTests: XCTestCase {
    /// Waits until the origin's count of streamed bytes stops moving (unchanged over 5 polls
    /// 50 ms apart), at most `timeout` seconds; returns the last count.
    private func settledStreamedBytes(_ origin: TestOrigin, timeout: TimeInterval = 10) async throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var last = origin.log.streamedBodyBytes
        var unchanged = 0
        for _ in 0..<1_000 where unchanged < 5 && Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
            let now = origin.log.streamedBodyBytes
            unchanged = now == last ? unchanged + 1 : 0
            last = now
        }
        return last
    }

    /// A 1 GiB response to a client that reads nothing: the origin is held back after a few
    /// MiB of socket buffers instead of the proxy buffering the body; once the client reads,
    /// the transfer moves on.
    func testProxyStopsReadingFromOriginWhileClientDoesNotRead() async throws {
        try await Fixture.run { proxy, origin in
            let size = 1 << 30
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/\(size)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let held = try await settledStreamedBytes(origin)
            XCTAssertGreaterThan(held, 0, "the transfer never started")
            // Kernel buffers on loopback (receive buffers autotune up to 32 MiB here) bound what
            // may legitimately be in flight; without back-pressure the whole GiB would be read.
            XCTAssertLessThan(held, 128 << 20, "the proxy kept reading from the origin while the client did not read")
            let read = try client.drain(count: 64 << 20, timeout: 20)
            XCTAssertEqual(read, 64 << 20)
            let resumed = try await settledStreamedBytes(origin)
            XCTAssertGreaterThan(resumed, held, "reading on the client side must let the origin send more")
            XCTAssertLessThan(resumed, size)
            client.close()
        }
    }

    /// A client that pauses reading for longer than the upstream timeout still gets the whole
    /// body: the origin is not silent, the proxy is holding it back.
    ///
    /// KNOWN BUG (Sources/ProxyEngine/Upstream/UpstreamHTTPHandler.swift, `installPipeline` /
    /// `userInboundEventTriggered`, with ForwardExchange.upstreamReceived pausing reads): the
    /// upstream `IdleStateHandler(allTimeout: upstreamTimeout)` keeps running while
    /// `pauseReads()` holds upstream reads for back-pressure. With no reads and no writes on
    /// the upstream channel it fires, the exchange fails with `UpstreamTimeoutError`, and since
    /// the response head was sent, the client connection is closed mid-body; the flow says
    /// "… sent nothing for 1s (response incomplete)". With the default 60 s, any download whose
    /// client stalls for a minute is cut off.
    func testSlowReaderIsNotCutOffByUpstreamTimeout() async throws {
        try await Fixture.run({ $0.upstreamTimeout = .seconds(1) }) { proxy, origin in
            let size = 64 << 20
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/bytes/\(size)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            // Stop reading for three upstream timeouts, while back-pressure holds the origin.
            _ = try await settledStreamedBytes(origin)
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
}
