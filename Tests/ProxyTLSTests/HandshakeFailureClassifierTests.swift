import ChildProcess
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ProxyTLS
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Real clients refuse a certificate they do not trust, and the error our NIOSSL server catches
/// is classified with what crossed the wire: curl and openssl on TLS 1.2 and 1.3, a NIOSSL
/// client, clients that hang up before or after our certificate, and scripted clients that fail
/// the handshake before they could have read it (the one-packet pin attack). Loopback only;
/// every wait is bounded by the server's limit.
final class HandshakeFailureClassifierTests: XCTestCase {
    private var identity: SelfSignedIdentity!
    private var server: HandshakeErrorServer!
    private var scratch: URL!
    /// A CA file holding an unrelated certificate: what the external clients trust instead of ours.
    private var unrelatedCAFile: URL!

    override func setUp() async throws {
        identity = try SelfSignedIdentity()
        server = try HandshakeErrorServer(identity: identity)
        scratch = try makeTemporaryDirectory().url
        unrelatedCAFile = try SelfSignedIdentity(commonName: "Unrelated CA").writeCertificate(to: scratch, name: "unrelated.pem")
    }

    override func tearDown() async throws {
        try await server?.shutdown()
    }

    /// The first error the server caught on its one connection, classified as the engine will.
    private func classifiedFirstError(file: StaticString = #filePath, line: UInt = #line)
        async throws -> (HandshakeFailureClassifier.Classification, HandshakeErrorServer.ConnectionOutcome)
    {
        let outcome = try await server.firstConnectionOutcome()
        let first = try XCTUnwrap(outcome.errors.first, "the server caught no error", file: file, line: line)
        return (HandshakeFailureClassifier.classify(first.error, handshakeCompleted: first.handshakeCompleted,
                                                    wire: first.wire), outcome)
    }

    private func curl(_ arguments: [String]) async throws -> ExternalClient.Outcome {
        try await ExternalClient.run("/usr/bin/curl", ["-q", "-sS", "--max-time", "10", "--cacert", unrelatedCAFile.path,
                                                        "--resolve", "localhost:\(server.port):127.0.0.1"]
                                                       + arguments + ["https://localhost:\(server.port)/"])
    }

    private func assertRejected(_ classification: HandshakeFailureClassifier.Classification, reason: String,
                                evidenceContains marker: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .rejected(let actualReason, let evidence) = classification else {
            return XCTFail("expected .rejected, got \(classification)", file: file, line: line)
        }
        XCTAssertEqual(actualReason, reason, file: file, line: line)
        XCTAssertTrue(evidence.contains(marker), "evidence: \(evidence)", file: file, line: line)
    }

    private let unknownCAOverTLS12 = "client sent unknown_ca after our certificate (TLS 1.2)"
    private let unknownCAOverTLS13 = "client sent unknown_ca after our certificate (TLS 1.3)"

    /// curl (OpenSSL) capped at TLS 1.2 sends an `unknown_ca` alert we can read.
    func testCurlOverTLS12SendsUnknownCA() async throws {
        let client = try await curl(["--tlsv1.2", "--tls-max", "1.2"])
        XCTAssertEqual(client.exitCode, 60, "curl should fail certificate verification: \(client.output)")
        let (classification, _) = try await classifiedFirstError()
        assertRejected(classification, reason: unknownCAOverTLS12, evidenceContains: "TLSV1_ALERT_UNKNOWN_CA")
    }

    /// curl over TLS 1.3 sends its alert in clear after we switched keys: a record we cannot decrypt.
    func testCurlOverTLS13AlertArrivesUnencrypted() async throws {
        let client = try await curl(["--tlsv1.3"])
        XCTAssertEqual(client.exitCode, 60, "curl should fail certificate verification: \(client.output)")
        let (classification, _) = try await classifiedFirstError()
        assertRejected(classification, reason: unknownCAOverTLS13, evidenceContains: "BAD_PACKET_LENGTH")
        assertRejected(classification, reason: unknownCAOverTLS13, evidenceContains: "fatal unknown_ca alert (unencrypted)")
    }

    /// `openssl s_client -verify_return_error` (TLS 1.3) looks the same as curl on TLS 1.3.
    func testOpenSSLClientRejects() async throws {
        let client = try await ExternalClient.run("/usr/bin/openssl", [
            "s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost",
            "-CAfile", unrelatedCAFile.path, "-verify_return_error",
        ])
        XCTAssertNotEqual(client.exitCode, 0, client.output)
        XCTAssertTrue(client.output.contains("verify error"), client.output)
        let (classification, _) = try await classifiedFirstError()
        assertRejected(classification, reason: unknownCAOverTLS13, evidenceContains: "BAD_PACKET_LENGTH")
    }

    /// A BoringSSL client with the system's trust roots sends `unknown_ca`, encrypted, on TLS 1.3.
    func testNIOSSLClientWithDefaultTrustSendsUnknownCA() async throws {
        let client = try await NIOSSLTestClient.connect(port: server.port, trusting: nil)
        XCTAssertFalse(client.handshakeSucceeded, "the client trusted a self-signed certificate")
        let (classification, _) = try await classifiedFirstError()
        assertRejected(classification, reason: unknownCAOverTLS13, evidenceContains: "TLSV1_ALERT_UNKNOWN_CA")
    }

    /// A client that completed the handshake accepted the certificate: its reset says nothing,
    /// though the same error before the handshake would be an ambiguous end.
    func testResetAfterCompletedHandshakeIsNoSignal() async throws {
        let client = try await NIOSSLTestClient.connect(port: server.port, trusting: identity.certificate, resetAfterHandshake: true)
        XCTAssertTrue(client.handshakeSucceeded)
        let (classification, outcome) = try await classifiedFirstError()
        XCTAssertTrue(outcome.handshakeCompleted)
        let first = try XCTUnwrap(outcome.errors.first)
        XCTAssertTrue(first.handshakeCompleted, "the error came before the handshake completed: \(first.error)")
        XCTAssertEqual(classification, .notAPinSignal)
        guard case .ambiguousEOF = HandshakeFailureClassifier.classify(first.error, handshakeCompleted: false,
                                                                       wire: first.wire) else {
            return XCTFail("\(first.error) after our certificate, before a completed handshake, should be ambiguous")
        }
    }

    /// A client that resets the connection in the middle of its ClientHello never saw our
    /// certificate: no signal (it used to count as an ambiguous end).
    func testResetBeforeOurCertificateIsNoSignal() async throws {
        try await RawTCPClient.send([0x16, 3, 1, 0, 200, 1], toPort: server.port, reset: true)
        let (classification, outcome) = try await classifiedFirstError()
        XCTAssertFalse(outcome.handshakeCompleted)
        XCTAssertNil(outcome.wire.certificateSent)
        XCTAssertEqual(classification, .notAPinSignal)
    }

    /// A client that closes quietly before finishing its ClientHello: no signal either.
    func testQuietCloseBeforeOurCertificateIsNoSignal() async throws {
        try await RawTCPClient.send([0x16, 3, 1, 0, 200, 1], toPort: server.port, reset: false)
        let (classification, outcome) = try await classifiedFirstError()
        XCTAssertEqual(classification, .notAPinSignal)
        XCTAssertTrue(outcome.wire.clientEndedBeforeCertificate)
    }

    // MARK: failures the client caused before it could have read our certificate

    /// The pin attack: a TLS 1.3 ClientHello and a junk record in one packet. Our server answers
    /// the hello (the certificate goes out) and then fails on the junk exactly as on an OpenSSL
    /// client's unencrypted alert, but the junk was sent before our certificate: no signal.
    func testHelloAndJunkInOnePacketIsNoSignal() async throws {
        let client = try await ScriptedTLSClient.run(.helloAndJunk, port: server.port, serverName: "www.paypal.com")
        XCTAssertEqual(client.exitCode, 0, client.errors)
        let (classification, outcome) = try await classifiedFirstError()
        let error = "\(try XCTUnwrap(outcome.errors.first).error)"
        XCTAssertTrue(error.contains("BAD_PACKET_LENGTH") || error.contains("DECRYPTION_FAILED"), error)
        XCTAssertEqual(outcome.wire.certificateSent, .tls13, "our certificate did go out")
        XCTAssertEqual(outcome.wire.clientRecordCountAfterCertificate, 0)
        XCTAssertEqual(classification, .notAPinSignal)
    }

    /// An `unknown_ca` alert sent together with the hello is no rejection of a certificate the
    /// client had not received.
    func testHelloAndAlertInOnePacketIsNoSignal() async throws {
        let client = try await ScriptedTLSClient.run(.helloAndAlert, port: server.port, serverName: "a.test")
        XCTAssertEqual(client.exitCode, 0, client.errors)
        let (classification, _) = try await classifiedFirstError()
        XCTAssertEqual(classification, .notAPinSignal)
    }

    /// The same alert sent after our flight arrived is a rejection, named with its alert.
    func testAlertAfterOurFlightIsARejection() async throws {
        let client = try await ScriptedTLSClient.run(.alertAfterFlight, port: server.port, serverName: "a.test")
        XCTAssertEqual(client.exitCode, 0, client.errors)
        let (classification, outcome) = try await classifiedFirstError()
        XCTAssertEqual(outcome.wire.firstClientRecordAfterCertificate, .alert(level: 2, description: 48))
        assertRejected(classification, reason: unknownCAOverTLS13, evidenceContains: "after it the client sent fatal unknown_ca")
    }

    /// A client that reads our flight and hangs up without a word: the ambiguous end to count.
    func testCloseAfterOurFlightIsAmbiguous() async throws {
        let client = try await ScriptedTLSClient.run(.closeAfterFlight, port: server.port, serverName: "a.test")
        XCTAssertEqual(client.exitCode, 0, client.errors)
        XCTAssertNotEqual(client.line, "flight 0")
        let outcome = try await server.firstConnectionOutcome()
        let classification = HandshakeFailureClassifier.classify(outcome.errors.first?.error, handshakeCompleted: false,
                                                                 wire: outcome.wire)
        guard case .ambiguousEOF(let evidence) = classification else { return XCTFail("got \(classification)") }
        XCTAssertTrue(evidence.contains("our certificate was sent (TLS 1.3)"), evidence)
    }

    /// Plain HTTP sent to a TLS port is a protocol mismatch, not a verdict on the certificate.
    func testPlainHTTPIsNoSignal() async throws {
        try await RawTCPClient.send(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), toPort: server.port, reset: false)
        let (classification, outcome) = try await classifiedFirstError()
        XCTAssertEqual(classification, .notAPinSignal, "\(outcome.errors.map(\.error))")
    }

    /// Errors that never come from a handshake, anything after one, and anything before our
    /// certificate went out.
    func testErrorsOutsideTheHandshake() {
        struct Unrelated: Error {}
        let reset = IOError(errnoCode: ECONNRESET, reason: "read")
        let sent = HandshakeWireEvidenceTests.certificateSent(.tls13)
        let unsent = HandshakeWireEvidence()
        XCTAssertEqual(HandshakeFailureClassifier.classify(Unrelated(), handshakeCompleted: false, wire: sent), .notAPinSignal)
        XCTAssertEqual(HandshakeFailureClassifier.classify(IOError(errnoCode: EACCES, reason: "x"), handshakeCompleted: false,
                                                           wire: sent), .notAPinSignal)
        XCTAssertEqual(HandshakeFailureClassifier.classify(reset, handshakeCompleted: true, wire: sent), .notAPinSignal)
        XCTAssertEqual(HandshakeFailureClassifier.classify(NIOSSLError.uncleanShutdown, handshakeCompleted: true, wire: sent),
                       .notAPinSignal)
        XCTAssertEqual(HandshakeFailureClassifier.classify(NIOSSLError.uncleanShutdown, handshakeCompleted: false, wire: sent),
                       .ambiguousEOF(evidence: "our certificate was sent (TLS 1.3); after it the client sent nothing; uncleanShutdown"))
        XCTAssertEqual(HandshakeFailureClassifier.classify(NIOSSLError.uncleanShutdown, handshakeCompleted: false,
                                                           wire: unsent), .notAPinSignal)
        let eof = NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake]))
        XCTAssertEqual(HandshakeFailureClassifier.classify(eof, handshakeCompleted: true, wire: sent), .notAPinSignal)
        XCTAssertEqual(HandshakeFailureClassifier.classify(eof, handshakeCompleted: false, wire: unsent), .notAPinSignal)
        guard case .ambiguousEOF = HandshakeFailureClassifier.classify(eof, handshakeCompleted: false, wire: sent) else {
            return XCTFail("EOF after our certificate, during the handshake, should be ambiguous")
        }
        guard case .ambiguousEOF = HandshakeFailureClassifier.classify(nil, handshakeCompleted: false, wire: sent) else {
            return XCTFail("a close after our certificate should be ambiguous")
        }
    }
}
