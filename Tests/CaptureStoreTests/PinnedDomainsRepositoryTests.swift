import CaptureTestSupport
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// `TrafficRepository`'s pin table: save (upsert), list, remove one, remove all, remove expired.
final class PinnedDomainsRepositoryTests: XCTestCase {
    private func pin(_ host: String, lastSeen: TimeInterval = 1_763_760_100.5, count: Int = 1) -> PinnedDomain {
        PinnedDomain(host: host, reason: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
                     evidence: "handshakeFailed(sslError([… TLSV1_ALERT_UNKNOWN_CA …])) \"quoted\" ☃",
                     firstSeen: Date(timeIntervalSince1970: 1_763_760_000.25),
                     lastSeen: Date(timeIntervalSince1970: lastSeen), count: count)
    }

    /// Pins come back field for field (times to the millisecond), ordered by host.
    func testSaveAndListRoundTrip() throws {
        let repository = try makeRepository()
        XCTAssertEqual(try repository.pinnedDomains(), [])
        let pins = [pin("b.example"), pin("a.example", count: 4)]
        for pin in pins {
            try repository.savePin(pin)
        }
        XCTAssertEqual(try repository.pinnedDomains(), [pins[1], pins[0]])
    }

    /// Saving a host again replaces its row (one row per host).
    func testSaveReplacesThePinOfTheSameHost() throws {
        let repository = try makeRepository()
        try repository.savePin(pin("a.example"))
        var updated = pin("a.example", lastSeen: 1_763_770_000, count: 2)
        updated.reason = "client closed the connection during the TLS handshake 3 times within 60 s"
        try repository.savePins([updated, pin("c.example")])
        XCTAssertEqual(try repository.pinnedDomains(), [updated, pin("c.example")])
    }

    /// `removePins(host:)` matches the stored host exactly (callers normalize it) and counts
    /// what it removed.
    func testRemovePin() throws {
        let repository = try makeRepository()
        try repository.savePins([pin("a.example"), pin("b.example")])
        XCTAssertEqual(try repository.removePins(host: "a.example."), 0)
        XCTAssertEqual(try repository.removePins(host: "a.example"), 1)
        XCTAssertEqual(try repository.removePins(host: "a.example"), 0)
        XCTAssertEqual(try repository.removePins(host: "never.example"), 0)
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["b.example"])
    }

    /// One row per host and client: the client, alert and version come back; `removePins(host:)`
    /// removes the host for every client, `clientAddress:` narrows it, `removePin(key)` removes one.
    func testPinsPerClient() throws {
        let repository = try makeRepository()
        let curl = ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
        let app = ClientIdentity(address: "10.0.0.2", fingerprint: "t130310h2_cccccccccccc_dddddddddddd")
        var forCurl = pin("a.example")
        forCurl.client = curl
        forCurl.alert = "unknown_ca"
        forCurl.tlsVersion = "TLS 1.3"
        var forApp = pin("a.example", count: 3)
        forApp.client = app
        let forEveryone = pin("a.example")
        var other = pin("b.example")
        other.client = app
        try repository.savePins([forCurl, forApp, forEveryone, other])
        XCTAssertEqual(try repository.pinnedDomains(), [forEveryone, forApp, forCurl, other])
        XCTAssertEqual(try repository.removePins(host: "a.example", clientAddress: "10.0.0.2:4711"), 1, "the port is ignored")
        XCTAssertTrue(try repository.removePin(forCurl.key))
        XCTAssertFalse(try repository.removePin(forCurl.key))
        XCTAssertEqual(try repository.pinnedDomains(), [forEveryone, other])
        try repository.savePins([forCurl, forApp])
        XCTAssertEqual(try repository.removePins(host: "a.example"), 3)
        XCTAssertEqual(try repository.pinnedDomains(), [other])
    }

    /// `removeAllPins` counts what it removed.
    func testRemoveAllPins() throws {
        let repository = try makeRepository()
        XCTAssertEqual(try repository.removeAllPins(), 0)
        try repository.savePins([pin("a.example"), pin("b.example"), pin("c.example")])
        XCTAssertEqual(try repository.removeAllPins(), 3)
        XCTAssertEqual(try repository.pinnedDomains(), [])
    }

    /// `removePins(expiredBefore:)` removes the pins last seen at or before the cutoff, as
    /// `isExpired` would, and keeps the others.
    func testRemoveExpiredPins() throws {
        let repository = try makeRepository()
        try repository.savePins([pin("old.example", lastSeen: 1_000), pin("edge.example", lastSeen: 2_000),
                                 pin("fresh.example", lastSeen: 2_000.001)])
        let cutoff = Date(timeIntervalSince1970: 2_000)
        XCTAssertTrue(pin("edge.example", lastSeen: 2_000).isExpired(ttl: 100, now: cutoff.addingTimeInterval(100)))
        XCTAssertEqual(try repository.removePins(expiredBefore: cutoff), 2)
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["fresh.example"])
    }
}
