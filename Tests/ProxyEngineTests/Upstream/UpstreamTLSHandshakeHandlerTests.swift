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
        let handler = UpstreamTLSHandshakeHandler(promise: channel.eventLoop.makePromise(), checkedName: "a.test")
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

    /// A failure carries what its reason needs: here the name that was checked (there is no TLS
    /// handler, so no certificate to read its names from).
    func testErrorBeforeCompletionFails() throws {
        let (channel, handler) = try makeChannel()
        var failure: (any Error)?
        handler.outcome.assumeIsolated().whenFailure { failure = $0 }
        channel.pipeline.fireErrorCaught(NIOSSLExtraError.failedToValidateHostname)
        let handshake = try XCTUnwrap(failure as? UpstreamHandshakeFailure)
        XCTAssertEqual(handshake.certificateProblem, .nameMismatch(names: [], checked: "a.test"))
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

    /// Certificate problems are 502 tls_certificate_error naming what failed; the rest
    /// tls_protocol_error in words, never a library's error text alone.
    func testFailuresMapToAnswers() {
        let verify = UpstreamTLSFailure.failure(for: NIOSSLError.handshakeFailed(.sslError([])), host: "a.test", port: 443)
        XCTAssertEqual(verify.statusCode, 502)
        XCTAssertEqual(verify.proxyStatusError, "tls_protocol_error")

        let mismatch = UpstreamTLSFailure.failure(
            for: UpstreamHandshakeFailure(error: NIOSSLExtraError.failedToValidateHostname,
                                          certificateProblem: .nameMismatch(names: ["a.test"], checked: "sni.test")),
            host: "10.0.0.1", port: 443)
        XCTAssertEqual(mismatch.proxyStatusError, "tls_certificate_error")
        XCTAssertEqual(mismatch.message, "the certificate of 10.0.0.1:443 is not trusted: certificate is for a.test, not sni.test")

        let bareMismatch = UpstreamTLSFailure.failure(for: NIOSSLExtraError.failedToValidateHostname, host: "a.test", port: 443)
        XCTAssertEqual(bareMismatch.proxyStatusError, "tls_certificate_error")

        let closed = UpstreamTLSFailure.failure(for: ChannelError.eof, host: "a.test", port: 443)
        XCTAssertEqual(closed, .upstreamTLSFailed(host: "a.test", port: 443,
                                                  reason: "the origin closed the connection during the handshake"))
        let wrapped = UpstreamTLSFailure.failure(
            for: UpstreamHandshakeFailure(error: ChannelError.eof, certificateProblem: nil), host: "a.test", port: 443)
        XCTAssertEqual(wrapped, closed)
        // BoringSSL's own EOF, an empty error stack, a reset: words, never NIOSSL's description
        // ("handshakeFailed(NIOSSL.BoringSSLError.sslError([Error:  EOF during handshake]))").
        let boringEOF = UpstreamTLSFailure.failure(
            for: UpstreamHandshakeFailure(error: NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake])),
                                          certificateProblem: nil), host: "a.test", port: 443)
        XCTAssertEqual(boringEOF, closed)
        for error: any Error in [NIOSSLError.handshakeFailed(.sslError([])), NIOSSLError.uncleanShutdown,
                                 IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")] {
            let message = UpstreamTLSFailure.failure(for: error, host: "a.test", port: 443).message
            XCTAssertFalse(message.contains("NIOSSL") || message.contains("handshakeFailed") || message.contains("descriptor"),
                           message)
        }
        XCTAssertFalse(UpstreamTLSFailure.suggestsLegacyOrigin(ChannelError.eof))
        XCTAssertFalse(UpstreamTLSFailure.suggestsLegacyOrigin(NIOSSLError.handshakeFailed(.sslError([]))))
    }

    /// After the probe: a version below the minimum names the version and the flag; an
    /// acceptable version means the cipher suites were the problem.
    func testLegacyOriginAnswers() {
        XCTAssertEqual(UpstreamTLSFailure.legacyOrigin(speaking: .tls11, minimum: .tls12, host: "a.test", port: 443).message,
                       "TLS handshake with a.test:443 failed: origin offers only TLS 1.1; use --upstream-tls-min 1.1 to allow it")
        XCTAssertTrue(UpstreamTLSFailure.legacyOrigin(speaking: .tls12, minimum: .tls12, host: "a.test", port: 443)
            .message.contains("legacy cipher suites"))
    }

    /// Errors that are not a client-certificate alert pass the translator unchanged.
    func testAlertTranslatorPassesOtherErrors() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(UpstreamTLSAlertTranslator(host: "a.test", port: 443))
        channel.pipeline.fireErrorCaught(NIOSSLError.uncleanShutdown)
        XCTAssertThrowsError(try channel.throwIfErrorCaught()) { error in
            guard case NIOSSLError.uncleanShutdown = error else { return XCTFail("\(error)") }
        }
        _ = try? channel.finish()
    }
}
