import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
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

    /// A connection given back again takes the list it idled in last without a lookup
    /// (`UpstreamHTTPHandler.poolSlot`): it is found, counted, and leaves when it closes idle,
    /// the second time as the first.
    func testConnectionGivenBackAgainIsFoundAndLeavesWhenItCloses() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (channel, handler) = try connection()
        for _ in 0..<3 {
            pool.checkin(key, channel: channel, handler: handler)
            XCTAssertEqual(pool.idleCount, 1)
            XCTAssertTrue(pool.checkout(key)?.0 === channel)
            XCTAssertEqual(pool.idleCount, 0)
        }
        pool.checkin(key, channel: channel, handler: handler)
        try channel.close().wait()
        XCTAssertEqual(pool.idleCount, 0)
        XCTAssertNil(pool.checkout(key))
    }

    /// The remembered list is used only for the same key in the same pool: given back under
    /// another key, or to another pool, a connection idles where it was given back and nowhere
    /// else.
    func testRememberedListServesOnlyItsKeyAndPool() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let other = UpstreamConnectionPool(maxIdlePerKey: 4)
        let a = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let b = UpstreamConnectionPool.Key(host: "a.test", port: 80, tls: true, serverName: "a.test")
        let (channel, handler) = try connection()
        pool.checkin(a, channel: channel, handler: handler)
        XCTAssertNotNil(pool.checkout(a))
        pool.checkin(b, channel: channel, handler: handler)
        XCTAssertNil(pool.checkout(a))
        XCTAssertTrue(pool.checkout(b)?.0 === channel)
        other.checkin(b, channel: channel, handler: handler)
        XCTAssertNil(pool.checkout(b))
        XCTAssertEqual(pool.idleCount, 0)
        XCTAssertEqual(other.idleCount, 1)
        try channel.close().wait()
        XCTAssertEqual(other.idleCount, 0, "closed while idle in the other pool, it left that pool")
    }

    /// Origins with nothing pooled are forgotten once there are many; a connection whose
    /// remembered list was forgotten is kept under its origin again, where a check-out finds it.
    func testConnectionOfForgottenOriginIsFoundAgain() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (channel, handler) = try connection()
        pool.checkin(key, channel: channel, handler: handler)
        XCTAssertNotNil(pool.checkout(key))
        // 1,100 other origins, each visited once and emptied: the next lookup forgets the empty.
        let (visitor, visitorHandler) = try connection()
        for index in 0..<1_100 {
            let visited = UpstreamConnectionPool.Key(host: "h\(index).test", port: 80)
            pool.checkin(visited, channel: visitor, handler: visitorHandler)
            XCTAssertNotNil(pool.checkout(visited))
        }
        pool.checkin(.init(host: "last.test", port: 80), channel: visitor, handler: visitorHandler)
        pool.checkin(key, channel: channel, handler: handler)
        XCTAssertEqual(pool.idleCount, 2)
        XCTAssertTrue(pool.checkout(key)?.0 === channel)
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

    /// Beyond the warm few per origin, the connections idle longest go after a few seconds (one
    /// sweep for the pool, no timer per check-in); the newest keep the upstream timeout, and one
    /// taken out meanwhile is not closed.
    func testConnectionsBeyondTheWarmFewIdleBriefly() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 32)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let warm = UpstreamConnectionPool.warmPerKey
        let connections = try (0..<(warm + 3)).map { _ in try connection() }
        for (channel, handler) in connections { pool.checkin(key, channel: channel, handler: handler) }
        let (reused, _) = try XCTUnwrap(pool.checkout(key))  // the newest: a surplus one
        XCTAssertTrue(reused === connections.last?.0)
        loop.advanceTime(by: UpstreamConnectionPool.surplusIdleTime + .milliseconds(1))
        XCTAssertEqual(connections.map(\.0.isActive), [false, false] + Array(repeating: true, count: warm + 1),
                       "the two idle longest go; the newest four stay, and the taken one is not the pool's")
        XCTAssertEqual(pool.idleCount, warm)
        loop.advanceTime(by: .seconds(25))  // the upstream timeout (30 s) for the warm ones
        XCTAssertEqual(pool.idleCount, 0)
    }

    // MARK: the cap on all idle connections

    /// Over the total cap the oldest idle connection goes, whatever its origin; a connection
    /// checked out meanwhile is not counted and never closed by it.
    func testTotalCapClosesTheOldestIdleConnection() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 3)
        let keys = ["a", "b", "c", "d", "e", "f"].map { UpstreamConnectionPool.Key(host: "\($0).test", port: 443, tls: true, serverName: "\($0).test") }
        let connections = try keys.map { _ in try connection() }
        for index in 0..<3 {
            pool.checkin(keys[index], channel: connections[index].0, handler: connections[index].1)
        }
        XCTAssertEqual(pool.idleCount, 3)
        pool.checkin(keys[3], channel: connections[3].0, handler: connections[3].1)
        XCTAssertEqual(pool.idleCount, 3)
        XCTAssertFalse(connections[0].0.isActive, "a, the oldest, is closed")
        XCTAssertNil(pool.checkout(keys[0]))
        XCTAssertTrue(connections[1].0.isActive && connections[2].0.isActive && connections[3].0.isActive)

        // c leaves the pool (in use): room for e without closing anything.
        XCTAssertTrue(pool.checkout(keys[2])?.0 === connections[2].0)
        pool.checkin(keys[4], channel: connections[4].0, handler: connections[4].1)
        XCTAssertEqual(pool.idleCount, 3)
        XCTAssertTrue(connections[1].0.isActive)
        // c comes back: it is now the newest, so b (the oldest still idle) goes.
        pool.checkin(keys[2], channel: connections[2].0, handler: connections[2].1)
        XCTAssertFalse(connections[1].0.isActive)
        XCTAssertTrue(connections[2].0.isActive, "the connection in use was never closed by the cap")
        // Then d, then e: check-in order, not origin order.
        pool.checkin(keys[5], channel: connections[5].0, handler: connections[5].1)
        XCTAssertFalse(connections[3].0.isActive)
        XCTAssertTrue(connections[4].0.isActive)
        XCTAssertEqual(pool.idleCount, 3)
        XCTAssertTrue(pool.checkout(keys[2])?.0 === connections[2].0)
        XCTAssertTrue(pool.checkout(keys[4])?.0 === connections[4].0)
        XCTAssertTrue(pool.checkout(keys[5])?.0 === connections[5].0)
        XCTAssertEqual(pool.idleCount, 0)
    }

    /// A pooled connection the origin closed frees its place: nothing else is closed for it.
    func testClosedConnectionsDoNotCountAgainstTheCap() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 2)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let other = UpstreamConnectionPool.Key(host: "b.test", port: 80)
        let (first, firstHandler) = try connection()
        let (second, secondHandler) = try connection()
        let (third, thirdHandler) = try connection()
        pool.checkin(key, channel: first, handler: firstHandler)
        pool.checkin(other, channel: second, handler: secondHandler)
        try first.close().wait()
        XCTAssertEqual(pool.idleCount, 1)
        pool.checkin(key, channel: third, handler: thirdHandler)
        XCTAssertTrue(second.isActive && third.isActive)
        XCTAssertEqual(pool.idleCount, 2)
    }

    /// A cap of zero pools nothing.
    func testZeroCapPoolsNothing() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 0)
        let (channel, handler) = try connection()
        pool.checkin(.init(host: "a.test", port: 80), channel: channel, handler: handler)
        XCTAssertFalse(channel.isActive)
        XCTAssertEqual(pool.idleCount, 0)
    }

    /// The ordinary life under load, one origin reused over and over, keeps the eviction order
    /// small (it is rebuilt from what is idle), and the cap still picks the oldest afterwards.
    func testReuseDoesNotGrowTheEvictionOrder() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 2)
        let key = UpstreamConnectionPool.Key(host: "a.test", port: 80)
        let (busy, busyHandler) = try connection()
        for _ in 0..<10_000 {
            pool.checkin(key, channel: busy, handler: busyHandler)
            XCTAssertNotNil(pool.checkout(key))
            XCTAssertLessThanOrEqual(pool.evictionOrderCount, 2 + 64, "compacted once over twice the idle count + 64")
        }
        let (old, oldHandler) = try connection()
        let (new, newHandler) = try connection()
        pool.checkin(.init(host: "old.test", port: 80), channel: old, handler: oldHandler)
        pool.checkin(key, channel: busy, handler: busyHandler)
        pool.checkin(.init(host: "new.test", port: 80), channel: new, handler: newHandler)
        XCTAssertFalse(old.isActive)
        XCTAssertTrue(busy.isActive && new.isActive)
    }

    /// With real sockets: the evicted connection's descriptor is closed (its peer sees the end
    /// of the connection), the others stay open.
    func testEvictionClosesTheSocket() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let peers = PeerCloseRecorder()
        let server = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(PeerCloseHandler(recorder: peers)) }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let loop = group.next()
        let clients = try (0..<3).map { _ in
            try ClientBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: .seconds(30))
                    }
                }
                .connect(to: server.localAddress!).wait()
        }
        let ports = clients.map { $0.localAddress!.port! }
        let unchecked = try loop.submit { UncheckedPool(pool: UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 2)) }.wait()
        try loop.submit {
            for (index, client) in clients.enumerated() {
                let handler = try client.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self)
                unchecked.pool.checkin(.init(host: "h\(index).test", port: 80), channel: client, handler: handler)
            }
        }.wait()
        try clients[0].closeFuture.wait()
        XCTAssertTrue(peers.waitForClose(of: ports[0]), "the origin saw the evicted connection end")
        XCTAssertTrue(clients[1].isActive && clients[2].isActive)
        XCTAssertEqual(try loop.submit { unchecked.pool.idleCount }.wait(), 2)
        XCTAssertFalse(peers.closed.contains(ports[1]) || peers.closed.contains(ports[2]))
        for client in clients { try? client.close().wait() }
    }
}

private struct UncheckedPool: @unchecked Sendable {
    let pool: UpstreamConnectionPool
}

/// The client ports whose connections the server saw end.
private final class PeerCloseRecorder: Sendable {
    private let box = NIOLockedValueBox<Set<Int>>([])
    var closed: Set<Int> { box.withLockedValue { $0 } }
    func record(_ port: Int) { box.withLockedValue { _ = $0.insert(port) } }

    /// Polls (at most 5 s) until `port` closed.
    func waitForClose(of port: Int) -> Bool {
        for _ in 0..<500 {
            if closed.contains(port) { return true }
            usleep(10_000)
        }
        return false
    }
}

private final class PeerCloseHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let recorder: PeerCloseRecorder
    private var port: Int?
    init(recorder: PeerCloseRecorder) { self.recorder = recorder }
    func channelActive(context: ChannelHandlerContext) {
        port = context.channel.remoteAddress?.port
        context.fireChannelActive()
    }
    func channelInactive(context: ChannelHandlerContext) {
        if let port { recorder.record(port) }
        context.fireChannelInactive()
    }
}
