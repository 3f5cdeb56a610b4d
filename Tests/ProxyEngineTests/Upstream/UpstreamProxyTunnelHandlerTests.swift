import NIOCore
import NIOEmbedded
import ProxyCore
import XCTest
@testable import ProxyEngine

/// The tunnel through an upstream proxy on an in-memory channel: the handshake written on
/// connect, the answer read with reads off, bytes after the answer handed on at the next read
/// (not before: a relay's glue is not in place yet), and every way it fails named after the proxy.
final class UpstreamProxyTunnelHandlerTests: XCTestCase {
    private func start(_ url: String, timeout: TimeAmount = .seconds(5))
        throws -> (EmbeddedChannel, EventLoopFuture<Void>, UpstreamProxyTunnelHandler) {
        let channel = EmbeddedChannel()
        let proxy = try UpstreamProxy.parse(url).get()
        let opened = channel.eventLoop.makePromise(of: Void.self)
        let handler = UpstreamProxyTunnelHandler(
            handshake: UpstreamProxyHandshake(proxy: proxy, host: "example.com", port: 443), timeout: timeout, opened: opened)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        return (channel, opened.futureResult, handler)
    }

    private func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text
    }

    func testOpensThenHandsOnLeftoverAtTheNextRead() throws {
        let (channel, opened, handler) = try start("http://p:3128")
        XCTAssertEqual(try written(channel), "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        var opens = 0
        opened.whenSuccess { opens += 1 }
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n220 greeting"))
        XCTAssertEqual(opens, 1)
        XCTAssertNil(try channel.readInbound(as: ByteBuffer.self), "nothing passes before a read is asked for")
        channel.read()
        var greeting = try XCTUnwrap(channel.readInbound(as: ByteBuffer.self))
        XCTAssertEqual(greeting.readString(length: greeting.readableBytes), "220 greeting")
        XCTAssertThrowsError(try channel.pipeline.syncOperations.context(handler: handler), "it left the pipeline")
        try channel.writeInbound(ByteBuffer(string: "more"))
        var more = try XCTUnwrap(channel.readInbound(as: ByteBuffer.self))
        XCTAssertEqual(more.readString(length: more.readableBytes), "more")
        _ = try channel.finish()
    }

    func testRefusalFailsNamingTheProxyAndCloses() throws {
        let (channel, opened, _) = try start("socks5h://p:1080")
        XCTAssertEqual(try channel.readOutbound(as: ByteBuffer.self), ByteBuffer(bytes: [5, 1, 0]))
        try channel.writeInbound(ByteBuffer(bytes: [5, 0]))
        XCTAssertNotNil(try channel.readOutbound(as: ByteBuffer.self), "the CONNECT request")
        try channel.writeInbound(ByteBuffer(bytes: [5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))
        XCTAssertThrowsError(try opened.wait()) { error in
            XCTAssertEqual(error as? ProxyFailure, .upstreamProxyFailed(
                proxy: "socks5h://p:1080", reason: "could not open example.com:443: connection refused"))
        }
        XCTAssertFalse(channel.isActive)
    }

    func testProxyClosingEarlyFails() throws {
        let (channel, opened, _) = try start("http://p:3128")
        channel.pipeline.fireChannelInactive()
        XCTAssertThrowsError(try opened.wait()) { error in
            XCTAssertEqual((error as? ProxyFailure)?.message,
                           "upstream proxy http://p:3128: closed the connection before the way to example.com:443 was open")
        }
    }

    func testSilentProxyTimesOut() throws {
        let (channel, opened, _) = try start("http://p:3128", timeout: .seconds(3))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        XCTAssertThrowsError(try opened.wait()) { error in
            XCTAssertEqual((error as? ProxyFailure)?.message,
                           "upstream proxy http://p:3128: did not open the way to example.com:443 within 3s")
            XCTAssertEqual((error as? ProxyFailure)?.statusCode, 502)
        }
    }
}
