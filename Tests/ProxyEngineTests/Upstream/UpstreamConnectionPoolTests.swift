import NIOCore
import NIOEmbedded
import XCTest
@testable import ProxyEngine

/// Idle upstream connections: kept per origin, newest first, never dead ones, bounded.
final class UpstreamConnectionPoolTests: XCTestCase {
    private let loop = EmbeddedEventLoop()

    private func connection() throws -> (EmbeddedChannel, UpstreamHTTPHandler) {
        let channel = EmbeddedChannel(loop: loop)
        let handler = UpstreamHTTPHandler(timeout: .seconds(30))
        try channel.pipeline.syncOperations.addHandler(handler)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 80))
        return (channel, handler)
    }

    func testCheckoutReturnsNewestLiveConnectionForItsOrigin() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (first, firstHandler) = try connection()
        let (second, secondHandler) = try connection()
        pool.checkin(key, channel: first, handler: firstHandler)
        pool.checkin(key, channel: second, handler: secondHandler)
        XCTAssertNil(pool.checkout(.init(host: "b.test", port: 80)))
        XCTAssertTrue(pool.checkout(key)?.0 === second)
        XCTAssertTrue(pool.checkout(key)?.0 === first)
        XCTAssertNil(pool.checkout(key))
    }

    /// A pooled connection the origin closes leaves the pool at once.
    func testClosedIdleConnectionLeavesThePool() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (channel, handler) = try connection()
        pool.checkin(key, channel: channel, handler: handler)
        XCTAssertEqual(pool.idleCount, 1)
        try channel.close().wait()
        XCTAssertEqual(pool.idleCount, 0)
        XCTAssertNil(pool.checkout(key))
    }

    /// Beyond the per-origin limit, returned connections are closed instead of kept.
    func testLimitPerOrigin() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 1)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (first, firstHandler) = try connection()
        let (second, secondHandler) = try connection()
        pool.checkin(key, channel: first, handler: firstHandler)
        pool.checkin(key, channel: second, handler: secondHandler)
        XCTAssertEqual(pool.idleCount, 1)
        XCTAssertFalse(second.isActive)
    }

    /// An idle connection that talks out of turn is dropped.
    func testUnsolicitedBytesCloseIdleConnection() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let channel = EmbeddedChannel(loop: loop)
        try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: .seconds(30))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 80))
        let handler = try channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self)
        pool.checkin(key, channel: channel, handler: handler)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        XCTAssertFalse(channel.isActive)
        XCTAssertEqual(pool.idleCount, 0)
    }

    /// An idle pooled connection times out and leaves the pool.
    func testIdleTimeoutClosesPooledConnection() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let channel = EmbeddedChannel(loop: loop)
        try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: .seconds(30))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 80))
        pool.checkin(key, channel: channel, handler: try channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self))
        loop.advanceTime(by: .seconds(31))
        XCTAssertFalse(channel.isActive)
        XCTAssertEqual(pool.idleCount, 0)
    }
}
