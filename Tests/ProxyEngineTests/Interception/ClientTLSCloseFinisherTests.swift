import NIOCore
import NIOEmbedded
import XCTest
@testable import ProxyEngine

/// A bare FIN after the proxy started closing a TLS connection ends it at once; before that it
/// is only passed on (a half-close the HTTP side handles).
final class ClientTLSCloseFinisherTests: XCTestCase {
    private func makeChannel() throws -> (EmbeddedChannel, ClientTLSState) {
        let state = ClientTLSState(serverName: "a.test")
        let channel = EmbeddedChannel(handler: ClientTLSCloseFinisher(state: state))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        return (channel, state)
    }

    func testFINBeforeAnyCloseIsOnlyPassedOn() throws {
        let (channel, _) = try makeChannel()
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertTrue(channel.isActive)
        _ = try? channel.finish()
    }

    func testFINAfterTheProxyStartedClosingClosesAtOnce() throws {
        let (channel, state) = try makeChannel()
        state.closeRequested = true
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertFalse(channel.isActive)
    }
}
