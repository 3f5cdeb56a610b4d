import NIOCore
import NIOEmbedded
import NIOHTTP2
import XCTest
@testable import ProxyEngine

/// HTTP/2 origin connections in the pool: shared per origin while they have room for a stream,
/// gone once closed or after GOAWAY, bounded per origin and in all (an idle one is closed to make
/// room; with none idle the new one is not shared and closes when its streams end), and exchanges
/// wait for a connection being dialled to an origin known to speak HTTP/2.
final class UpstreamHTTP2PoolTests: XCTestCase {
    private let loop = EmbeddedEventLoop()

    private func connection() throws -> (EmbeddedChannel, UpstreamHTTP2Connection) {
        let channel = EmbeddedChannel(loop: loop)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 443))
        try UpstreamHTTP2Connection.install(on: channel, streamTimeout: .seconds(60), tlsSession: nil)
        let connection = try XCTUnwrap(UpstreamHTTP2Connection.on(channel))
        // The origin's SETTINGS: a limit of two streams.
        try deliver(.settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: 2)])), on: channel)
        return (channel, connection)
    }

    /// A connection-level frame as NIOHTTP2 hands it on after taking it.
    private func deliver(_ payload: HTTP2Frame.FramePayload, on channel: EmbeddedChannel) throws {
        let http2 = try channel.pipeline.syncOperations.context(handlerType: NIOHTTP2Handler.self)
        http2.fireChannelRead(NIOAny(HTTP2Frame(streamID: .rootStream, payload: payload)))
    }

    private func key(_ host: String) -> UpstreamConnectionPool.Key {
        .init(host: host, port: 443, tls: true, serverName: host)
    }

    func testSharedUntilFullAndForgottenAfterGoAway() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 8)
        let (channel, connection) = try connection()
        XCTAssertEqual(connection.maxConcurrentStreams, 2, "the origin's SETTINGS were read")
        pool.register(key("a.test"), multiplexed: connection)
        XCTAssertTrue(pool.multiplexedConnection(key("a.test")) === connection)
        XCTAssertNil(pool.multiplexedConnection(key("b.test")))
        _ = connection.openStream()
        _ = connection.openStream()
        XCTAssertEqual(connection.openStreams, 2)
        XCTAssertNil(pool.multiplexedConnection(key("a.test")), "full: the next exchange dials another connection")
        try deliver(.goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil), on: channel)
        XCTAssertTrue(connection.goingAway)
        XCTAssertEqual(pool.multiplexedCount, 0, "GOAWAY: no new stream goes on it")
        XCTAssertTrue(channel.isActive, "its open streams finish first")
    }

    func testBoundedInAllIdleOnesGiveWay() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 2)
        let (firstChannel, first) = try connection()
        let (_, second) = try connection()
        pool.register(key("a.test"), multiplexed: first)
        pool.register(key("b.test"), multiplexed: second)
        _ = second.openStream()
        let (_, third) = try connection()
        pool.register(key("c.test"), multiplexed: third)
        XCTAssertEqual(pool.multiplexedCount, 2)
        XCTAssertFalse(firstChannel.isActive, "the idle connection was closed to make room")
        XCTAssertNil(pool.multiplexedConnection(key("a.test")))
        XCTAssertTrue(pool.multiplexedConnection(key("c.test")) === third)

        _ = third.openStream()
        let (fourthChannel, fourth) = try connection()
        pool.register(key("d.test"), multiplexed: fourth)
        XCTAssertFalse(fourth.isShared, "none idle: the new connection is not shared")
        XCTAssertEqual(pool.multiplexedCount, 2)
        XCTAssertTrue(fourthChannel.isActive)
    }

    func testPerOriginBound() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 1, maxIdle: 8)
        let (_, first) = try connection()
        let (_, second) = try connection()
        pool.register(key("a.test"), multiplexed: first)
        pool.register(key("a.test"), multiplexed: second)
        XCTAssertTrue(first.isShared)
        XCTAssertFalse(second.isShared)
        XCTAssertEqual(pool.multiplexedCount, 1)
    }

    func testWaitersShareTheConnectionBeingDialled() throws {
        let pool = UpstreamConnectionPool(maxIdlePerKey: 4, maxIdle: 8)
        let origin = key("a.test")
        XCTAssertEqual(pool.awaitHTTP2Dial(origin) { _ in XCTFail("unknown origins are not waited for") }.queued, false)
        let (_, known) = try connection()
        pool.register(origin, multiplexed: known)  // now known to speak HTTP/2
        let lead = pool.awaitHTTP2Dial(origin) { _ in XCTFail("the leader is not called back") }
        XCTAssertEqual(lead.queued, false)
        XCTAssertEqual(lead.leads, true)
        var handed: [UpstreamHTTP2Connection?] = []
        XCTAssertTrue(pool.awaitHTTP2Dial(origin) { handed.append($0) }.queued)
        XCTAssertTrue(pool.awaitHTTP2Dial(origin) { handed.append($0) }.queued)
        let (_, dialled) = try connection()
        pool.finishHTTP2Dial(origin, connection: dialled)
        XCTAssertEqual(handed.count, 2)
        XCTAssertTrue(handed.allSatisfy { $0 === dialled })
        // A dial that failed (or chose HTTP/1) hands nil and forgets that the origin speaks h2.
        _ = pool.awaitHTTP2Dial(origin) { _ in }
        var failed: [UpstreamHTTP2Connection?] = [dialled]
        _ = pool.awaitHTTP2Dial(origin) { failed = [$0] }
        pool.finishHTTP2Dial(origin, connection: nil)
        XCTAssertEqual(failed.count, 1)
        XCTAssertNil(failed[0])
        XCTAssertEqual(pool.awaitHTTP2Dial(origin) { _ in }.leads, false, "no longer known to speak HTTP/2")
    }
}
