import Foundation
import NIOCore
import NIOEmbedded
import NIOTLS
import ProxyModel
import ProxyTLS
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// A tunnel that fails is recorded as a failed exchange, without the CONNECT's 200, and its
/// error says who did what in words, wherever it failed: the client's TLS handshake, or a reset
/// on either side of a relay. A relay that ends cleanly keeps its 200.
final class FailedTunnelTests: XCTestCase {
    private let connect = Flow(kind: .tunnel, clientAddress: "10.0.0.5:4000", method: "CONNECT", host: "a.test", port: 443,
                               status: 200, reason: "Connection established")

    /// Relays `error` (when given) on the client's or the server's side, closes both, and
    /// returns the recorded flow.
    private func relay(error: (any Error)?, onClientSide: Bool, answered: Bool = false) throws -> Flow {
        let sink = CollectingSink()
        let loop = EmbeddedEventLoop()
        let client = EmbeddedChannel(loop: loop)
        let server = EmbeddedChannel(loop: loop)
        let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: TunnelMeter.recording(connect, to: sink))
        try client.pipeline.syncOperations.addHandler(clientGlue)
        try server.pipeline.syncOperations.addHandler(serverGlue)
        _ = client.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        _ = server.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 2))
        try client.writeInbound(ByteBuffer(string: "hello"))
        if answered { try server.writeInbound(ByteBuffer(string: "welcome")) }
        if let error { (onClientSide ? client : server).pipeline.fireErrorCaught(error) }
        _ = try? client.close().wait()
        _ = try? server.close().wait()
        XCTAssertEqual(sink.flows.count, 1)
        return try XCTUnwrap(sink.flows.first)
    }

    func testResetMidRelayIsAFailedExchangeInWords() throws {
        let reset = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        let byClient = try relay(error: reset, onClientSide: true)
        XCTAssertEqual(byClient.error, "tunnel closed with an error: the client reset the connection")
        XCTAssertNil(byClient.status)
        XCTAssertNil(byClient.reason)
        XCTAssertEqual(byClient.bytesUp, 5)
        XCTAssertNotNil(byClient.finishedAt)

        let byServer = try relay(error: reset, onClientSide: false)
        XCTAssertEqual(byServer.error, "tunnel closed with an error: the server reset the connection")
        XCTAssertNil(byServer.status)
    }

    /// curl closes a TLS tunnel with the server's session tickets unread, so its kernel sends a
    /// reset: after an answer, the client's reset or broken pipe is the end of an ordinary
    /// tunnel (noted), not a failure. Before any answer, or from the server, it stays a failure.
    func testClientResetAfterTheAnswerIsAnOrdinaryEnd() throws {
        for errno in [ECONNRESET, EPIPE] {
            let flow = try relay(error: IOError(errnoCode: errno, reason: "read(descriptor:pointer:size:)"),
                                 onClientSide: true, answered: true)
            XCTAssertNil(flow.error, "errno \(errno)")
            XCTAssertEqual(flow.status, 200)
            XCTAssertEqual(flow.bytesDown, 7)
            XCTAssertTrue(flow.note?.contains("the client ended the tunnel with a reset after the server had answered") ?? false,
                          "\(String(describing: flow.note))")
        }
        let serverReset = try relay(error: IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"),
                                    onClientSide: false, answered: true)
        XCTAssertEqual(serverReset.error, "tunnel closed with an error: the server reset the connection")
        XCTAssertNil(serverReset.status)
        let otherError = try relay(error: IOError(errnoCode: ETIMEDOUT, reason: "read(descriptor:pointer:size:)"),
                                   onClientSide: true, answered: true)
        XCTAssertNil(otherError.status, "only a reset or broken pipe is the usual way to end")
    }

    func testCleanRelayKeepsTheConnectAnswer() throws {
        let flow = try relay(error: nil, onClientSide: true)
        XCTAssertNil(flow.error)
        XCTAssertEqual(flow.status, 200)
    }

    /// The client closes during the handshake: the flow the observer records has no status.
    func testFailedClientHandshakeHasNoStatus() throws {
        let sink = CollectingSink()
        let wire = HandshakeWireRecorder()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(wire)
        try channel.pipeline.syncOperations.addHandler(ClientTLSObserver(
            state: ClientTLSState(serverName: "a.test"), host: "a.test", pins: nil, client: ClientIdentity(address: "127.0.0.1", fingerprint: "t13d0000"),
            sink: sink, flow: connect, wire: wire))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        channel.pipeline.fireErrorCaught(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"))
        _ = try? channel.finish()
        let flow = try XCTUnwrap(sink.flows.first)
        XCTAssertTrue(flow.error?.hasPrefix("TLS handshake with the client failed") ?? false, "\(String(describing: flow.error))")
        XCTAssertNil(flow.status)
        XCTAssertNil(flow.reason)
    }
}
