import Foundation
import NIOCore
import NIOEmbedded
import NIOTLS
import ProxyModel
import ProxyTLS
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// What the client-handshake observer reports for auto-pinning and records as flows, with the
/// wire recorder in front of it (our certificate flight written through it, or not).
final class ClientTLSObserverTests: XCTestCase {
    private final class RecordingPins: PinRegistry, @unchecked Sendable {
        var outcomes: [HandshakeOutcome] = []
        var clients: [ClientIdentity] = []
        var versions: [String?] = []
        /// What `record` answers for a pin signal.
        var answer: PinUpdate = .unchanged
        func pin(for host: String, client: ClientIdentity) -> PinnedDomain? { nil }
        func record(_ outcome: HandshakeOutcome, host: String, client: ClientIdentity, tlsVersion: String?) -> PinUpdate {
            outcomes.append(outcome)
            clients.append(client)
            versions.append(tlsVersion)
            switch outcome {
            case .completed, .notAPinSignal: return .unchanged
            case .rejected, .ambiguousEOF: return answer
            }
        }
    }

    private static let client = ClientIdentity(connectedFrom: "10.0.0.5:4000", fingerprint: "t131513h2_0123456789ab_ba9876543210")

    /// A TLS 1.3 ServerHello and an encrypted record: what our server writes with its certificate.
    private static let tls13Flight: [UInt8] = {
        let hello: [UInt8] = [2, 0, 0, 40, 3, 3] + [UInt8](repeating: 0x5A, count: 32) + [0, 0x13, 0x01, 0, 0, 0]
        return [22, 3, 3, 0, UInt8(hello.count)] + hello + [23, 3, 3, 0, 4, 1, 2, 3, 4]
    }()

    private func makeChannel(host: String = "a.test", failuresPin: Bool = true) throws
        -> (EmbeddedChannel, ClientTLSState, RecordingPins, CollectingSink, HandshakeWireRecorder) {
        let state = ClientTLSState(serverName: host)
        let pins = RecordingPins()
        let sink = CollectingSink()
        let flow = Flow(kind: .tunnel, clientAddress: "10.0.0.5:4000", method: "CONNECT", host: "127.0.0.1", port: 9,
                        status: 200)
        let wire = HandshakeWireRecorder()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(wire)
        try channel.pipeline.syncOperations.addHandler(ClientTLSObserver(state: state, host: host, pins: pins,
                                                                         client: Self.client, failuresPin: failuresPin,
                                                                         sink: sink,
                                                                         flow: flow, wire: wire))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        return (channel, state, pins, sink, wire)
    }

    func testCompletedHandshakeIsReportedAndFillsTheDetails() throws {
        let (channel, state, pins, sink, _) = try makeChannel()
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "http/1.1"))
        XCTAssertEqual(pins.outcomes, [.completed])
        XCTAssertEqual(pins.clients, [Self.client])
        XCTAssertEqual(state.details.alpn, "http/1.1")
        XCTAssertEqual(state.details.sni, "a.test")
        XCTAssertThrowsError(try channel.pipeline.syncOperations.handler(type: HandshakeWireRecorder.self),
                             "the recorder leaves with the observer: decrypted bytes never pass it")
        _ = try? channel.finish()
        XCTAssertTrue(sink.flows.isEmpty, "a good handshake records no flow of its own")
    }

    /// The proxy's own pages (`proxyapp.cert`): a completed handshake there shows the client
    /// trusts the CA, but a failure there never reaches the pins.
    func testBuiltInPagesShowTrustButNeverPin() throws {
        let (completed, _, pins, _, _) = try makeChannel(host: "proxyapp.cert", failuresPin: false)
        completed.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "http/1.1"))
        XCTAssertEqual(pins.outcomes, [.completed])
        _ = try? completed.finish()
        let (failed, _, failedPins, sink, _) = try makeChannel(host: "proxyapp.cert", failuresPin: false)
        failedPins.answer = .pinned(PinnedDomain(host: "proxyapp.cert", reason: "r", evidence: "e", firstSeen: Date(),
                                                 lastSeen: Date(), count: 1))
        try failed.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        _ = try? failed.finish()
        XCTAssertEqual(failedPins.outcomes, [])
        XCTAssertEqual(sink.flows.count, 1)
        XCTAssertNil(sink.flows.first?.note)
    }

    /// A client that closes after our certificate went out: the ambiguous end to count.
    func testClientClosingAfterOurCertificateIsAmbiguousAndRecorded() throws {
        let (channel, _, pins, sink, _) = try makeChannel()
        try channel.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        _ = try? channel.finish()
        guard case .ambiguousEOF(let evidence)? = pins.outcomes.first else { return XCTFail("\(pins.outcomes)") }
        XCTAssertTrue(evidence.contains("our certificate was sent (TLS 1.3)"), evidence)
        XCTAssertEqual(sink.flows.count, 1)
        XCTAssertEqual(sink.flows.first?.error, "TLS handshake with the client failed: the client closed the connection "
                       + "after our certificate, during the TLS handshake")
    }

    /// A client that closes before our certificate went out says nothing about it.
    func testClientClosingBeforeOurCertificateIsNoPinSignal() throws {
        let (channel, _, pins, sink, _) = try makeChannel()
        try channel.writeInbound(ByteBuffer(bytes: [22, 3, 1, 0, 200, 1]))
        _ = try? channel.finish()
        XCTAssertEqual(pins.outcomes, [.notAPinSignal])
        XCTAssertEqual(sink.flows.first?.error, "TLS handshake with the client failed: the client closed the connection "
                       + "during the TLS handshake (before our certificate was sent: not a pin signal)")
    }

    /// A reset that arrives after our certificate is an ambiguous end too.
    func testResetAfterOurCertificateIsAmbiguous() throws {
        let (channel, _, pins, _, _) = try makeChannel()
        try channel.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        channel.pipeline.fireErrorCaught(IOError(errnoCode: ECONNRESET, reason: "read"))
        guard case .ambiguousEOF? = pins.outcomes.first else { return XCTFail("\(pins.outcomes)") }
    }

    /// The proxy's own close (idle timeout, shutdown) must never count towards pinning.
    func testProxyClosingMidHandshakeIsNoPinSignal() throws {
        let (channel, state, pins, sink, _) = try makeChannel()
        try channel.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        state.closeRequested = true
        _ = try? channel.finish()
        XCTAssertEqual(pins.outcomes, [.notAPinSignal])
        XCTAssertTrue(sink.flows.first?.error?.contains("the proxy closed the connection") ?? false)
    }

    /// The flow of a failed handshake names the pinned host and why, though the CONNECT named
    /// another (`CONNECT 127.0.0.1:9` with SNI www.paypal.com); a refusal says why not.
    func testFlowNamesThePinnedHostAndItsEvidence() throws {
        let (channel, _, pins, sink, _) = try makeChannel(host: "www.paypal.com")
        let pin = PinnedDomain(host: "www.paypal.com", reason: "client sent unknown_ca after our certificate (TLS 1.3)",
                               evidence: "e", firstSeen: Date(), lastSeen: Date(), count: 1)
        pins.answer = .pinned(pin)
        try channel.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        _ = try? channel.finish()
        XCTAssertEqual(sink.flows.first?.host, "127.0.0.1")
        XCTAssertEqual(sink.flows.first?.note, "pinned www.paypal.com for any client: client sent unknown_ca after our "
                       + "certificate (TLS 1.3); to undo: `p` in the TUI, or `proxyapp pins remove www.paypal.com`")
        XCTAssertEqual(pins.versions, ["TLS 1.3"], "the version of the refused handshake is kept as evidence")
        XCTAssertEqual(ClientTLSObserver.note(for: .refused("not pinned: 10.0.0.5 made 10 new pins in the last minute")),
                       "not pinned: 10.0.0.5 made 10 new pins in the last minute")
        XCTAssertNil(ClientTLSObserver.note(for: .unchanged))
    }

    /// A client that never completed a handshake with us is told to install the CA, and the
    /// pin for a client names it.
    func testUntrustedClientIsToldToInstallTheCA() throws {
        let (channel, _, pins, sink, _) = try makeChannel(host: "bank.test")
        pins.answer = .untrustedClient
        try channel.writeOutbound(ByteBuffer(bytes: Self.tls13Flight))
        _ = try? channel.finish()
        XCTAssertEqual(sink.flows.first?.note,
                       "this client does not trust the ProxyApp CA yet: install it from http://proxyapp.cert/")
        XCTAssertEqual(pins.clients, [Self.client], "reported with its identity: address without port, fingerprint")
        let pin = PinnedDomain(host: "bank.test", reason: "r", evidence: "e", firstSeen: Date(), lastSeen: Date(), count: 4,
                               client: Self.client)
        XCTAssertEqual(ClientTLSObserver.note(for: .renewed(pin)),
                       "pinned bank.test for 10.0.0.5 t131513h2_0123456789ab_ba9876543210 (renewed, 4 failures): r; "
                       + "to undo: `p` in the TUI, or `proxyapp pins remove bank.test`")
    }
}
