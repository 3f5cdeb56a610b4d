import Foundation
import NIOCore
import NIOEmbedded
import NIOTLS
import ProxyModel
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// What the client-handshake observer reports for auto-pinning and records as flows.
final class ClientTLSObserverTests: XCTestCase {
    private final class RecordingPins: PinRegistry, @unchecked Sendable {
        var outcomes: [HandshakeOutcome] = []
        func pin(for host: String) -> PinnedDomain? { nil }
        func record(_ outcome: HandshakeOutcome, host: String) { outcomes.append(outcome) }
    }

    private func makeChannel() throws -> (EmbeddedChannel, ClientTLSState, RecordingPins, CollectingSink) {
        let state = ClientTLSState(serverName: "a.test")
        let pins = RecordingPins()
        let sink = CollectingSink()
        let flow = Flow(kind: .tunnel, method: "CONNECT", host: "a.test", port: 443, status: 200)
        let channel = EmbeddedChannel(handler: ClientTLSObserver(state: state, host: "a.test", pins: pins, sink: sink,
                                                                 flow: flow))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        return (channel, state, pins, sink)
    }

    func testCompletedHandshakeIsReportedAndFillsTheDetails() throws {
        let (channel, state, pins, sink) = try makeChannel()
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "http/1.1"))
        XCTAssertEqual(pins.outcomes, [.completed])
        XCTAssertEqual(state.details.alpn, "http/1.1")
        XCTAssertEqual(state.details.sni, "a.test")
        _ = try? channel.finish()
        XCTAssertTrue(sink.flows.isEmpty, "a good handshake records no flow of its own")
    }

    func testClientClosingMidHandshakeIsAmbiguousAndRecorded() throws {
        let (channel, _, pins, sink) = try makeChannel()
        _ = try? channel.finish()
        guard case .ambiguousEOF? = pins.outcomes.first else { return XCTFail("\(pins.outcomes)") }
        XCTAssertEqual(sink.flows.count, 1)
        XCTAssertTrue(sink.flows.first?.error?.contains("TLS handshake with the client failed") ?? false)
    }

    /// The proxy's own close (idle timeout, shutdown) must never count towards pinning.
    func testProxyClosingMidHandshakeIsNoPinSignal() throws {
        let (channel, state, pins, sink) = try makeChannel()
        state.closeRequested = true
        _ = try? channel.finish()
        XCTAssertEqual(pins.outcomes, [.notAPinSignal])
        XCTAssertTrue(sink.flows.first?.error?.contains("the proxy closed the connection") ?? false)
    }
}
