import XCTest
@testable import ProxyTLS

/// What "the client received our certificate" means, on synthetic records: our flight is found
/// in our own bytes (TLS 1.3, TLS 1.2, after a HelloRetryRequest), counts only once its write
/// completed, and only the client's records that start after that answer it.
final class HandshakeWireEvidenceTests: XCTestCase {
    // MARK: building records

    static func record(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [type, 3, 3, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    }

    static func handshake(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        [type, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    /// A ServerHello: legacy_version, a random (or the HelloRetryRequest one), no session id,
    /// TLS_AES_128_GCM_SHA256, no compression, no extensions.
    static func serverHello(version: [UInt8] = [3, 3], retry: Bool = false) -> [UInt8] {
        let random = retry ? HandshakeMessageScanner.helloRetryRequestRandom : [UInt8](repeating: 0x5A, count: 32)
        return handshake(2, version + random + [0, 0x13, 0x01, 0, 0, 0])
    }

    static let tls13Flight = record(22, serverHello()) + record(20, [1]) + record(23, [UInt8](repeating: 9, count: 300))
    static let tls12Flight = record(22, serverHello() + handshake(11, [0, 0, 3, 0, 0, 0]) + handshake(12, [1, 2])
                                    + handshake(14, []))

    /// Evidence whose certificate flight of `version` went out, and nothing else.
    static func certificateSent(_ version: HandshakeWireEvidence.Version) -> HandshakeWireEvidence {
        var wire = HandshakeWireEvidence()
        XCTAssertTrue(wire.serverWrote(version == .tls13 ? tls13Flight : tls12Flight))
        wire.certificateWriteCompleted()
        return wire
    }

    private let unknownCA = record(21, [2, 48])

    // MARK: our flight

    func testTLS13FlightIsFoundAndCountsOnceWritten() {
        var wire = HandshakeWireEvidence()
        XCTAssertTrue(wire.serverWrote(Self.tls13Flight))
        XCTAssertNil(wire.certificateSent, "not before the write completed")
        wire.certificateWriteCompleted()
        XCTAssertEqual(wire.certificateSent, .tls13)
        XCTAssertFalse(wire.serverWrote(Self.record(23, [1])), "found once")
    }

    func testTLS12FlightEndsWithServerHelloDone() {
        var wire = HandshakeWireEvidence()
        let flight = Self.tls12Flight
        XCTAssertFalse(wire.serverWrote(flight.prefix(60)), "the flight is not over yet")
        XCTAssertTrue(wire.serverWrote(flight.dropFirst(60)))
        wire.certificateWriteCompleted()
        XCTAssertEqual(wire.certificateSent, .tls12)
    }

    /// A HelloRetryRequest carries no certificate: only the flight after the second hello does.
    func testHelloRetryRequestIsNotTheCertificateFlight() {
        var wire = HandshakeWireEvidence()
        XCTAssertFalse(wire.serverWrote(Self.record(22, Self.serverHello(retry: true)) + Self.record(20, [1])))
        XCTAssertFalse(wire.serverWrote(Self.record(23, [1, 2, 3])), "encrypted bytes after a retry request are not ours")
        XCTAssertTrue(wire.serverWrote(Self.tls13Flight))
    }

    /// A protocol_version alert (a client offering only old versions) is no certificate.
    func testAnAlertIsNoFlight() {
        var wire = HandshakeWireEvidence()
        XCTAssertFalse(wire.serverWrote(Self.record(21, [2, 70])))
        XCTAssertNil(wire.certificateSent)
    }

    /// A TLS 1.2 flight without a Certificate message (never ours, but checked) does not count.
    func testTLS12FlightWithoutCertificateDoesNotCount() {
        var wire = HandshakeWireEvidence()
        XCTAssertFalse(wire.serverWrote(Self.record(22, Self.serverHello() + Self.handshake(14, []))))
    }

    // MARK: the client's records

    /// The pin attack: the junk record came with the hello, before our certificate.
    func testRecordsSentBeforeOurCertificateDoNotCount() {
        var wire = HandshakeWireEvidence()
        wire.clientSent(Self.record(22, [1, 0, 0, 0]) + Self.record(23, [UInt8](repeating: 0, count: 32)))
        XCTAssertTrue(wire.serverWrote(Self.tls13Flight))
        wire.certificateWriteCompleted()
        XCTAssertEqual(wire.clientRecordCountAfterCertificate, 0)
        XCTAssertNil(wire.firstClientRecordAfterCertificate)
    }

    /// A record begun before our certificate and finished after it was still sent before it.
    func testRecordStraddlingOurCertificateDoesNotCount() {
        var wire = HandshakeWireEvidence()
        let early = Self.record(21, [2, 48])
        wire.clientSent(early.prefix(6))
        _ = wire.serverWrote(Self.tls13Flight)
        wire.certificateWriteCompleted()
        wire.clientSent(early.suffix(1))
        XCTAssertEqual(wire.clientRecordCountAfterCertificate, 0)
        wire.clientSent(unknownCA)
        XCTAssertEqual(wire.clientRecordCountAfterCertificate, 1)
        XCTAssertEqual(wire.firstClientRecordAfterCertificate, .alert(level: 2, description: 48))
    }

    /// After our certificate: a compatibility change_cipher_spec is skipped when naming the
    /// first record; an alert is read even when its bytes come one at a time.
    func testClientRecordsAfterOurCertificate() {
        var wire = Self.certificateSent(.tls13)
        for byte in Self.record(20, [1]) + unknownCA { wire.clientSent([byte]) }
        XCTAssertEqual(wire.clientRecordsAfterCertificate, [.changeCipherSpec, .alert(level: 2, description: 48)])
        XCTAssertEqual(wire.firstClientRecordAfterCertificate, .alert(level: 2, description: 48))
        XCTAssertEqual(wire.summary, "our certificate was sent (TLS 1.3); after it the client sent change_cipher_spec, "
                       + "fatal unknown_ca alert (unencrypted)")
        wire.clientSent(Self.record(23, [1, 2, 3]))
        XCTAssertEqual(wire.clientRecordsAfterCertificate.last, .encrypted)
    }

    /// An end of input counts as after our certificate only when it came after.
    func testEndOfInputBeforeAndAfter() {
        var before = HandshakeWireEvidence()
        before.clientInputEnded()
        _ = before.serverWrote(Self.tls13Flight)
        before.certificateWriteCompleted()
        XCTAssertTrue(before.clientEndedBeforeCertificate)

        var after = Self.certificateSent(.tls12)
        after.clientInputEnded()
        XCTAssertFalse(after.clientEndedBeforeCertificate)
        XCTAssertEqual(after.summary, "our certificate was sent (TLS 1.2); after it the client sent nothing and closed")
    }

    /// Huge or hostile lengths in our own or the client's bytes never trap.
    func testArbitraryBytesNeverTrap() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var wire = HandshakeWireEvidence()
            let server = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let client = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = wire.serverWrote(server)
            wire.certificateWriteCompleted()
            wire.clientSent(client)
            _ = wire.summary
        }
    }
}
