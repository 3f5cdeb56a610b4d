import NIOCore
import NIOEmbedded
import NIOSSL
import NIOTLS
import ProxyCore
import XCTest
@testable import ProxyEngine

/// The handler that holds a new upstream connection back until its TLS handshake is done, and
/// the answers a failed handshake becomes.
final class UpstreamTLSHandshakeHandlerTests: XCTestCase {
    private func makeChannel() throws -> (EmbeddedChannel, UpstreamTLSHandshakeHandler) {
        let channel = EmbeddedChannel()
        let handler = UpstreamTLSHandshakeHandler(promise: channel.eventLoop.makePromise())
        try channel.pipeline.syncOperations.addHandler(handler)
        return (channel, handler)
    }

    func testCompletedHandshakeSucceedsAndLeavesThePipeline() throws {
        let (channel, handler) = try makeChannel()
        var session: UpstreamTLSSession?
        handler.outcome.assumeIsolated().whenSuccess { session = $0 }
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "http/1.1"))
        XCTAssertNotNil(session)
        XCTAssertThrowsError(try channel.pipeline.syncOperations.handler(type: UpstreamTLSHandshakeHandler.self))
    }

    func testErrorBeforeCompletionFails() throws {
        let (channel, handler) = try makeChannel()
        var failure: (any Error)?
        handler.outcome.assumeIsolated().whenFailure { failure = $0 }
        channel.pipeline.fireErrorCaught(NIOSSLExtraError.failedToValidateHostname)
        XCTAssertNotNil(failure)
        _ = try? channel.finish()
    }

    func testCloseBeforeCompletionFails() throws {
        let (channel, handler) = try makeChannel()
        var failure: (any Error)?
        handler.outcome.assumeIsolated().whenFailure { failure = $0 }
        _ = try channel.finish()
        XCTAssertNotNil(failure)
    }

    func testTimeOutFailsWithTimedOut() throws {
        let (channel, handler) = try makeChannel()
        var failure: (any Error)?
        handler.outcome.assumeIsolated().whenFailure { failure = $0 }
        handler.timeOut()
        XCTAssertTrue(failure is UpstreamTLSHandshakeHandler.TimedOut)
        _ = try? channel.finish()
    }

    /// Certificate problems are 502 tls_certificate_error naming the fix; the rest tls_protocol_error.
    func testFailuresMapToAnswers() {
        let verify = UpstreamTLSHandshakeHandler.failure(
            for: NIOSSLError.handshakeFailed(.sslError([])), host: "a.test", port: 443)
        XCTAssertEqual(verify.statusCode, 502)
        XCTAssertEqual(verify.proxyStatusError, "tls_protocol_error")

        let hostname = UpstreamTLSHandshakeHandler.failure(
            for: NIOSSLExtraError.failedToValidateHostname, host: "a.test", port: 443)
        XCTAssertEqual(hostname.proxyStatusError, "tls_certificate_error")
        XCTAssertTrue(hostname.message.contains("does not name 'a.test'"), hostname.message)

        let closed = UpstreamTLSHandshakeHandler.failure(for: ChannelError.eof, host: "a.test", port: 443)
        XCTAssertEqual(closed, .upstreamTLSFailed(host: "a.test", port: 443,
                                                  reason: "the origin closed the connection during the handshake"))
    }
}
