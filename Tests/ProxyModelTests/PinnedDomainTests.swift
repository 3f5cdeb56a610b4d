import Foundation
import ProxyModel
import XCTest

/// `PinnedDomain`'s host normalisation and expiry, and the HTTPS additions to `Flow`.
final class PinnedDomainTests: XCTestCase {
    private let lastSeen = Date(timeIntervalSince1970: 1_763_760_000)

    func testHostIsLowercased() {
        let pin = PinnedDomain(host: "API.Example.COM", reason: "r", evidence: "e", firstSeen: lastSeen,
                               lastSeen: lastSeen, count: 1)
        XCTAssertEqual(pin.host, "api.example.com")
    }

    /// Expired exactly when `lastSeen + ttl <= now`.
    func testExpiry() {
        let pin = PinnedDomain(host: "a.test", reason: "r", evidence: "e", firstSeen: lastSeen.addingTimeInterval(-50),
                               lastSeen: lastSeen, count: 2)
        XCTAssertEqual(pin.expiry(ttl: 60), lastSeen.addingTimeInterval(60))
        XCTAssertFalse(pin.isExpired(ttl: 60, now: lastSeen))
        XCTAssertFalse(pin.isExpired(ttl: 60, now: lastSeen.addingTimeInterval(59.999)))
        XCTAssertTrue(pin.isExpired(ttl: 60, now: lastSeen.addingTimeInterval(60)))
        XCTAssertTrue(pin.isExpired(ttl: 60, now: lastSeen.addingTimeInterval(3600)))
    }

    /// `TLSDetails.isEmpty` is true only with no field set.
    func testTLSDetailsIsEmpty() {
        XCTAssertTrue(TLSDetails().isEmpty)
        XCTAssertFalse(TLSDetails(sni: "").isEmpty)
        XCTAssertFalse(TLSDetails(upstreamNotAfter: lastSeen).isEmpty)
        XCTAssertFalse(TLSDetails(clientVersion: "TLSv1.3").isEmpty)
    }

    /// Flows made without the HTTPS fields have none; an HTTPS flow's URL says https.
    func testFlowDefaultsAndHTTPSURL() {
        let plain = Flow(host: "a.test")
        XCTAssertNil(plain.tls)
        XCTAssertNil(plain.note)
        let https = Flow(scheme: "https", host: "a.test", port: 443, path: "/x", tls: TLSDetails(alpn: "h2"),
                         note: "n")
        XCTAssertEqual(https.url, "https://a.test/x")
        XCTAssertEqual(https.tls?.alpn, "h2")
        XCTAssertEqual(https.note, "n")
    }
}
