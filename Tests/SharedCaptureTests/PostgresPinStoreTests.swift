import CaptureStore
import CaptureTestSupport
import Foundation
import PersistentPins
import ProxyCore
import ProxyModel
import SharedCapture
import XCTest

/// Pins in the shared store: what one proxy pins, every proxy writing the store passes through,
/// and a pin removed from any machine stops applying everywhere.
final class PostgresPinStoreTests: PostgresTestCase {
    private let client = ClientIdentity(address: "10.0.0.7", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
    private let unknownCA = HandshakeOutcome.rejected(reason: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
                                                      evidence: "TLSV1_ALERT_UNKNOWN_CA")

    /// A proxy's registry over its own session of the store (refreshed by hand).
    private func registry(_ session: PostgresSession, log: CapturingLogHandler = CapturingLogHandler(),
                          startsDuringOutage: Bool = false) throws -> PersistentPinRegistry {
        try PersistentPinRegistry(repository: PostgresPinStore(session: otherSession(session)), ttl: 7 * 86_400,
                                  logger: log.logger, refreshInterval: nil, startsDuringOutage: startsDuringOutage)
    }

    /// What the engine does when a client that trusts the CA refuses the certificate for `host`.
    private func pinByRefusal(_ registry: PersistentPinRegistry, host: String) {
        registry.record(.completed, host: "trusted.invalid", client: client, tlsVersion: "TLS 1.3")
        registry.record(unknownCA, host: host, client: client, tlsVersion: "TLS 1.3")
    }

    func testAPinLearnedByOneProxyAppliesOnEvery() throws {
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let lab1 = try registry(session)
        let lab2 = try registry(session)
        pinByRefusal(lab1, host: "Bank.Example")
        lab1.flush()
        XCTAssertNil(lab2.pin(for: "bank.example", client: client), "not before lab-2 refreshes")
        lab2.reload()
        let pin = try XCTUnwrap(lab2.pin(for: "bank.example", client: client))
        XCTAssertEqual(pin.reason, "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)")
        XCTAssertEqual(pin.tlsVersion, "TLS 1.3")

        // Listed and removed from a third machine (`proxyapp pins --store`).
        let tool = PostgresPinStore(session: otherSession(session))
        XCTAssertEqual(try tool.pinnedDomains().map(\.host), ["bank.example"])
        XCTAssertEqual(try tool.pinnedDomains().first?.client, client)
        XCTAssertEqual(try tool.removePins(host: "bank.example", clientAddress: "10.0.0.7:5555"), 1)
        lab1.reload()
        lab2.reload()
        XCTAssertNil(lab1.pin(for: "bank.example", client: client))
        XCTAssertNil(lab2.pin(for: "bank.example", client: client))
        XCTAssertEqual(try tool.removeAllPins(), 0)
    }

    /// The change count moves with every change, from any session, so an idle refresh reads one
    /// row; an "any client" pin (nil client) round-trips.
    func testChangeCountAndAnyClientPins() throws {
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let store = PostgresPinStore(session: session)
        let start = Date(timeIntervalSince1970: 1_763_760_000)
        let anyClient = PinnedDomain(host: "old.example", reason: "r", evidence: "e", firstSeen: start, lastSeen: start,
                                     count: 1)
        let counts = try store.applyPinChanges(saving: [anyClient], removing: [])
        XCTAssertEqual(counts.after, counts.before + 1)
        XCTAssertEqual(try store.pinnedDomains(), [anyClient])
        let again = try store.applyPinChanges(saving: [anyClient], removing: [])
        XCTAssertEqual(again.before, counts.after, "an update counts too")
        XCTAssertGreaterThan(again.after, again.before)
        XCTAssertEqual(try store.pinnedDomainsAndChangeCount().changeCount, again.after)
        XCTAssertEqual(try store.removePins(expiredBefore: start.addingTimeInterval(-1)), 0)
        XCTAssertEqual(try store.removePins(expiredBefore: start), 1)
        XCTAssertFalse(try store.removePin(anyClient.key))
    }

    /// A proxy starting while the store is down runs with no pins, says so once, and reads the
    /// pins when the store answers again.
    func testAProxyStartingDuringAnOutageReadsThePinsLater() throws {
        let cluster = try requireCluster()
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let first = try registry(session)
        pinByRefusal(first, host: "bank.example")
        first.flush()
        XCTAssertEqual(try PostgresPinStore(session: otherSession(session)).pinnedDomains().count, 1)

        try cluster.stopServer()
        let log = CapturingLogHandler()
        let late = try registry(session, log: log, startsDuringOutage: true)
        XCTAssertNil(late.pin(for: "bank.example", client: client))
        let messages = log.entries.map(\.message)
        XCTAssertEqual(messages.filter { $0.contains("cannot read pinned hosts") && $0.contains("logged once") }.count, 1,
                       "\(messages)")
        XCTAssertFalse(messages.joined().contains("PSQLError"), "\(messages)")
        try cluster.startServer()
        late.reload()
        XCTAssertNotNil(late.pin(for: "bank.example", client: client))
    }
}
