import Foundation
import ProxyModel
import XCTest

@testable import ProxyCore

/// Issue 14: auto-pin never traps a client that does not trust the CA yet, and pins per client
/// and host. Transcripts with explicit times and identities.
final class AutoPinPerClientTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_763_760_000)
    private let unknownCA = HandshakeOutcome.rejected(reason: "client sent unknown_ca after our certificate (TLS 1.3)",
                                                      evidence: "e", alert: "unknown_ca")
    private let eof = HandshakeOutcome.ambiguousEOF(evidence: "EOF during handshake")
    private let curl = ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
    private let app = ClientIdentity(address: "127.0.0.1", fingerprint: "t130409h1_cccccccccccc_dddddddddddd")

    private func at(_ seconds: TimeInterval) -> Date {
        start.addingTimeInterval(seconds)
    }

    /// The first try before the CA is installed: curl rejects, nothing is pinned, the flow is told
    /// why; the next try with the CA is intercepted, and only after it does a rejection pin.
    func testClientThatNeverCompletedAHandshakeIsNotPinned() {
        var policy = AutoPinPolicy(ttl: 86_400)
        XCTAssertEqual(policy.record(unknownCA, host: "host.test", client: curl, now: at(0)).update, .untrustedClient)
        XCTAssertEqual(policy.record(unknownCA, host: "host.test", client: curl, now: at(1)).update, .untrustedClient)
        for second in 2...4 {
            XCTAssertEqual(policy.record(eof, host: "host.test", client: curl, now: at(Double(second))).update, .untrustedClient)
        }
        XCTAssertNil(policy.pin(for: "host.test", client: curl, now: at(5)))
        XCTAssertEqual(policy.count, 0)
        XCTAssertFalse(policy.isTrusted(curl))

        XCTAssertEqual(policy.record(.completed, host: "host.test", client: curl, now: at(6)).update, .unchanged)
        XCTAssertTrue(policy.isTrusted(curl))
        guard case .pinned(let pin) = policy.record(unknownCA, host: "other.test", client: curl, tlsVersion: "TLS 1.3",
                                                    now: at(7)).update else {
            return XCTFail("a trusted client's rejection pins")
        }
        XCTAssertEqual(pin, PinnedDomain(host: "other.test", reason: "client sent unknown_ca after our certificate (TLS 1.3)",
                                         evidence: "e", firstSeen: at(7), lastSeen: at(7), count: 1, client: curl,
                                         alert: "unknown_ca", tlsVersion: "TLS 1.3"))
    }

    /// Untrusted refusals do not use up the client's --pin-rate allowance.
    func testUntrustedRefusalsDoNotCountAgainstTheRate() {
        var policy = AutoPinPolicy(ttl: 86_400, limits: .init(maximumPins: 10, newPinsPerClientPerMinute: 1))
        for index in 0..<5 {
            XCTAssertEqual(policy.record(unknownCA, host: "h\(index).test", client: curl, now: at(0)).update, .untrustedClient)
        }
        _ = policy.record(.completed, host: "a.test", client: curl, now: at(1))
        XCTAssertNotNil(policy.record(unknownCA, host: "h0.test", client: curl, now: at(2)).changedPin)
    }

    /// Pins are per client and host: the pinning app passes through, the browser (another
    /// fingerprint on the same machine) is still intercepted there, and elsewhere the app is too.
    func testPinsArePerClientAndHost() {
        var policy = AutoPinPolicy(ttl: 86_400)
        _ = policy.record(.completed, host: "a.test", client: app, now: at(0))
        _ = policy.record(.completed, host: "a.test", client: curl, now: at(0))
        XCTAssertNotNil(policy.record(unknownCA, host: "bank.test", client: app, now: at(1)).changedPin)
        XCTAssertEqual(policy.pin(for: "BANK.test", client: app, now: at(2))?.client, app)
        XCTAssertNil(policy.pin(for: "bank.test", client: curl, now: at(2)), "another fingerprint: still intercepted")
        XCTAssertNil(policy.pin(for: "a.test", client: app, now: at(2)), "another host: still intercepted")
        let sameStackElsewhere = ClientIdentity(address: "10.0.0.2", fingerprint: app.fingerprint)
        XCTAssertNil(policy.pin(for: "bank.test", client: sameStackElsewhere, now: at(2)), "another address")
        XCTAssertEqual(policy.pins(for: "bank.test", now: at(2)).map(\.client), [app])
        // A second client pins the same host: two pins; removing the host removes both.
        XCTAssertNotNil(policy.record(unknownCA, host: "bank.test", client: curl, now: at(3)).changedPin)
        XCTAssertEqual(policy.count, 2)
        XCTAssertEqual(policy.remove(host: "Bank.Test").count, 2)
        XCTAssertNil(policy.pin(for: "bank.test", client: app, now: at(4)))
    }

    /// A client copying a trusted client's ClientHello from another address is not trusted, so
    /// it pins nothing; once it trusts us itself, its pins are its own (address and fingerprint).
    func testSpoofedFingerprintPinsOnlyForTheSpoofer() {
        var policy = AutoPinPolicy(ttl: 86_400)
        _ = policy.record(.completed, host: "a.test", client: curl, now: at(0))
        let spoofer = ClientIdentity(address: "10.6.6.6", fingerprint: curl.fingerprint)
        XCTAssertEqual(policy.record(unknownCA, host: "bank.test", client: spoofer, now: at(1)).update, .untrustedClient)
        _ = policy.record(.completed, host: "a.test", client: spoofer, now: at(2))
        XCTAssertNotNil(policy.record(unknownCA, host: "bank.test", client: spoofer, now: at(3)).changedPin)
        XCTAssertNil(policy.pin(for: "bank.test", client: curl, now: at(4)), "the victim is still intercepted")
        XCTAssertNotNil(policy.pin(for: "bank.test", client: spoofer, now: at(4)))
    }

    /// Ambiguous EOFs count per client: three from a trusted client pin it; another client's
    /// EOFs on the same host do not add to them.
    func testAmbiguousFailuresCountPerClient() {
        var policy = AutoPinPolicy(ttl: 86_400)
        _ = policy.record(.completed, host: "a.test", client: app, now: at(0))
        _ = policy.record(.completed, host: "a.test", client: curl, now: at(0))
        XCTAssertEqual(policy.record(eof, host: "node.test", client: app, now: at(1)).update, .unchanged)
        XCTAssertEqual(policy.record(eof, host: "node.test", client: curl, now: at(2)).update, .unchanged)
        XCTAssertEqual(policy.record(eof, host: "node.test", client: app, now: at(3)).update, .unchanged)
        XCTAssertEqual(policy.record(eof, host: "node.test", client: curl, now: at(4)).update, .unchanged)
        guard case .pinned(let pin) = policy.record(eof, host: "node.test", client: app, now: at(5)).update else {
            return XCTFail("the third EOF of one client pins")
        }
        XCTAssertEqual(pin.client, app)
        XCTAssertEqual(pin.count, 3)
        XCTAssertNil(pin.alert)
        XCTAssertNil(policy.pin(for: "node.test", client: curl, now: at(6)))
    }

    /// Pins stored before v6 apply to every client; stored pins make their clients trusted.
    func testLoadedPins() {
        var policy = AutoPinPolicy(ttl: 86_400)
        let anyClient = PinnedDomain(host: "old.test", reason: "r", evidence: "e", firstSeen: at(0), lastSeen: at(0), count: 1)
        let forApp = PinnedDomain(host: "bank.test", reason: "r", evidence: "e", firstSeen: at(0), lastSeen: at(0), count: 1,
                                  client: app)
        policy.load([anyClient, forApp])
        XCTAssertEqual(policy.pin(for: "old.test", client: curl, now: at(1)), anyClient)
        XCTAssertEqual(policy.pin(for: "old.test", client: app, now: at(1)), anyClient)
        XCTAssertTrue(policy.isTrusted(app), "it refused our certificate while trusted")
        XCTAssertFalse(policy.isTrusted(curl))
        XCTAssertNotNil(policy.record(unknownCA, host: "other.test", client: app, now: at(2)).changedPin)
        XCTAssertNil(policy.pin(for: "old.test", client: curl, now: at(86_401)), "TTL as before")
    }

    /// A flood of fingerprints from one address: the trusted set stays bounded, the pins stay
    /// bounded and rate-limited by address whatever the fingerprints.
    func testFloodOfFingerprintsIsBounded() {
        var policy = AutoPinPolicy(ttl: 86_400, limits: .init(maximumPins: 50, newPinsPerClientPerMinute: 10,
                                                               trustedClients: 64))
        var pinned = 0
        for index in 0..<5_000 {
            let client = ClientIdentity(address: "10.6.6.6", fingerprint: "t13\(index)")
            _ = policy.record(.completed, host: "a.test", client: client, now: at(0))
            XCTAssertLessThanOrEqual(policy.trustedClientCount, 64)
            if policy.record(unknownCA, host: "h\(index).test", client: client, now: at(0)).changedPin != nil {
                pinned += 1
            }
        }
        XCTAssertEqual(pinned, 10, "--pin-rate counts the address, not the fingerprint")
        XCTAssertLessThanOrEqual(policy.count, 50)
        XCTAssertFalse(policy.isTrusted(ClientIdentity(address: "10.6.6.6", fingerprint: "t130")), "evicted")
    }

    /// The trusted set forgets the least recently seen first: a client seen again survives.
    func testTrustedClientsForgetTheLeastRecentlySeen() {
        var trusted = TrustedClients(capacity: 4)
        let clients = (0..<6).map { ClientIdentity(address: "10.0.0.\($0)", fingerprint: "f") }
        trusted.insert(clients[0])
        trusted.insert(clients[1])
        trusted.insert(clients[2])  // 0 and 1 become the previous generation
        trusted.insert(clients[0])  // seen again: back in the current one
        trusted.insert(clients[3])  // 2 and 0 become the previous generation; 1 is forgotten
        XCTAssertFalse(trusted.contains(clients[1]))
        XCTAssertTrue([0, 2, 3].allSatisfy { trusted.contains(clients[$0]) })
        trusted.insert(clients[4])
        trusted.insert(clients[5])  // 3 and 4 become the previous generation; 2 and 0 are forgotten
        XCTAssertEqual(trusted.count, 3)
        XCTAssertEqual((0..<6).filter { trusted.contains(clients[$0]) }, [3, 4, 5])
    }
}
