import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTP2
import NIOTLS
import Rules
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// After the client's TLS handshake the connection gets the HTTP front ALPN agreed on; a
/// handshake that never finishes is closed after the client idle timeout, as an HTTP/1
/// connection that never sends a request is.
final class ClientProtocolSelectorTests: XCTestCase {
    private func makeChannel() throws -> (EmbeddedChannel, ClientTLSState) {
        let loop = EmbeddedEventLoop()
        var configuration = ProxyConfiguration()
        configuration.clientIdleTimeout = .seconds(10)
        let services = ProxyServices(configuration: configuration, sink: CollectingSink(), connector: FakeConnector(loop: loop),
                                     rules: LiveRules(.empty), blockingWork: InlineWork(), logger: Logger(label: "test"))
        let channel = EmbeddedChannel(loop: loop)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        let state = ClientTLSState(serverName: "a.test")
        try channel.pipeline.syncOperations.addHandler(ClientProtocolSelector(
            services: services, tunnel: .init(scheme: "https", host: "a.test", port: 443, tls: state)))
        return (channel, state)
    }

    func testAHandshakeThatNeverEndsIsClosedAfterTheIdleTimeout() throws {
        let (channel, state) = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        XCTAssertTrue(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        XCTAssertFalse(channel.isActive)
        XCTAssertTrue(state.closeRequested, "a close the proxy started (not a pin signal)")
    }

    func testH2GetsTheHTTP2Front() throws {
        let (channel, _) = try makeChannel()
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        let pipeline = channel.pipeline.syncOperations
        XCTAssertNoThrow(try pipeline.handler(type: NIOHTTP2Handler.self))
        XCTAssertThrowsError(try pipeline.handler(type: ClientHTTPHandler.self))
        XCTAssertThrowsError(try pipeline.handler(type: ClientProtocolSelector.self), "it leaves once done")
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        XCTAssertTrue(channel.isActive, "the handshake deadline no longer applies")
        _ = try? channel.finish()
    }

    func testAnythingElseGetsHTTP1() throws {
        for negotiated in [nil, "http/1.1"] as [String?] {
            let (channel, _) = try makeChannel()
            channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: negotiated))
            let pipeline = channel.pipeline.syncOperations
            XCTAssertNoThrow(try pipeline.handler(type: ClientHTTPHandler.self), "\(negotiated ?? "no ALPN")")
            XCTAssertThrowsError(try pipeline.handler(type: NIOHTTP2Handler.self))
            XCTAssertThrowsError(try pipeline.handler(type: ClientProtocolSelector.self))
            _ = try? channel.finish()
        }
    }
}
