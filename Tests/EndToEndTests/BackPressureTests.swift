import Foundation
import ProxyModel
import XCTest

/// Back-pressure: a client that does not read must make the proxy stop reading from the
/// origin, so memory stays bounded whatever the body size.
final class BackPressureTests: XCTestCase {
    /// Waits until the origin streamed something and its count of streamed bytes stops moving
    /// (unchanged over 20 polls 50 ms apart: a whole second, longer than a loaded machine's
    /// hiccup, which a 250 ms window took for a hold) and returns it. `timeout` is only a safety
    /// net: a count still moving or still 0 then fails the test instead of passing on it.
    static func settledStreamedBytes(_ origin: TestOrigin, timeout: TimeInterval = 60,
                                     file: StaticString = #filePath, line: UInt = #line) async throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var last = origin.log.streamedBodyBytes
        var unchanged = 0
        while unchanged < 20 {
            guard Date() < deadline else {
                XCTFail(last == 0 ? "the origin streamed nothing within \(timeout) s"
                            : "the origin was still sending after \(timeout) s (\(last) bytes): nothing held it back",
                        file: file, line: line)
                return last
            }
            try await Task.sleep(nanoseconds: 50_000_000)
            let now = origin.log.streamedBodyBytes
            unchanged = now == last && now > 0 ? unchanged + 1 : 0
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
            let held = try await Self.settledStreamedBytes(origin)
            XCTAssertGreaterThan(held, 0, "the transfer never started")
            // Kernel buffers on loopback (receive buffers autotune up to 32 MiB here) bound what
            // may legitimately be in flight; without back-pressure the whole GiB would be read.
            XCTAssertLessThan(held, 128 << 20, "the proxy kept reading from the origin while the client did not read")
            let read = try client.drain(count: 64 << 20, timeout: 20)
            XCTAssertEqual(read, 64 << 20)
            let resumed = try await Self.settledStreamedBytes(origin)
            XCTAssertGreaterThan(resumed, held, "reading on the client side must let the origin send more")
            XCTAssertLessThan(resumed, size)
            client.close()
        }
    }
}
