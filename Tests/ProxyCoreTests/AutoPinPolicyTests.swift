import Foundation
import ProxyModel
import XCTest

@testable import ProxyCore

/// The auto-pin rules, each driven with explicit times.
final class AutoPinPolicyTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_763_760_000)
    private let day: TimeInterval = 86_400
    private let unknownCA = HandshakeOutcome.rejected(
        reason: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
        evidence: "handshakeFailed(sslError([Error: 268436502 error:10000416:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA]))")
    private let eof = HandshakeOutcome.ambiguousEOF(evidence: "EOF during handshake")

    private func at(_ seconds: TimeInterval) -> Date {
        start.addingTimeInterval(seconds)
    }

    /// One explicit rejection pins the host at once, with its reason, evidence and times.
    func testRejectionPinsAtOnce() throws {
        var policy = AutoPinPolicy(ttl: 7 * day)
        XCTAssertNil(policy.pin(for: "api.example.com", now: at(0)))
        let created = try XCTUnwrap(policy.record(unknownCA, host: "api.example.com", now: at(0)))
        let expected = PinnedDomain(
            host: "api.example.com", reason: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
            evidence: "handshakeFailed(sslError([Error: 268436502 error:10000416:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA]))",
            firstSeen: at(0), lastSeen: at(0), count: 1, client: AutoPinPolicy.identity("127.0.0.1:1"))
        XCTAssertEqual(created, expected)
        XCTAssertEqual(policy.pin(for: "api.example.com", now: at(1)), expected)
        XCTAssertNil(policy.pin(for: "other.example.com", now: at(1)))
    }

    /// Hosts match whatever their case; the pin stores the lowercased host.
    func testHostsMatchCaseInsensitively() throws {
        var policy = AutoPinPolicy(ttl: day)
        let pin = try XCTUnwrap(policy.record(unknownCA, host: "API.Example.COM", now: at(0)))
        XCTAssertEqual(pin.host, "api.example.com")
        XCTAssertEqual(policy.pin(for: "api.example.com", now: at(1))?.host, "api.example.com")
        XCTAssertEqual(policy.pin(for: "Api.Example.Com", now: at(1))?.host, "api.example.com")
        XCTAssertEqual(policy.record(eof, host: "api.EXAMPLE.com", now: at(2))?.count, 2)
    }

    /// Pins are keyed by `HostName.normalized`, like every host pattern: a trailing dot, an IDN
    /// name in Unicode or punycode and an IPv6 spelling all name one pin.
    func testHostsAreNormalizedLikeHostPatterns() throws {
        var policy = AutoPinPolicy(ttl: day)
        XCTAssertEqual(try XCTUnwrap(policy.record(unknownCA, host: "Bücher.example.", now: at(0))).host,
                       "xn--bcher-kva.example")
        XCTAssertNotNil(policy.pin(for: "xn--bcher-kva.example", now: at(1)))
        XCTAssertNotNil(policy.pin(for: "bücher.example", now: at(1)))
        _ = policy.record(unknownCA, host: "[0:0::1]", now: at(2))
        XCTAssertEqual(policy.pin(for: "::1", now: at(3))?.host, "::1")
    }

    /// Two ambiguous EOFs do not pin; the third within the window does, with the first failure
    /// as `firstSeen` and the three counted.
    func testThreeAmbiguousFailuresWithinTheWindowPin() throws {
        var policy = AutoPinPolicy(ttl: day)
        XCTAssertNil(policy.record(eof, host: "node.test", now: at(0)))
        XCTAssertNil(policy.record(eof, host: "node.test", now: at(20)))
        XCTAssertNil(policy.pin(for: "node.test", now: at(21)))
        let pin = try XCTUnwrap(policy.record(eof, host: "node.test", now: at(40)))
        XCTAssertEqual(pin.firstSeen, at(0))
        XCTAssertEqual(pin.lastSeen, at(40))
        XCTAssertEqual(pin.count, 3)
        XCTAssertEqual(pin.evidence, "EOF during handshake")
        XCTAssertEqual(pin.reason, "client closed the connection after our certificate, during the TLS handshake, "
                       + "3 times within 60 s")
        XCTAssertEqual(policy.pin(for: "node.test", now: at(41)), pin)
    }

    /// Failures spread wider than the window never add up to a pin; the window includes its end.
    func testAmbiguousFailuresOutsideTheWindowDoNotPin() {
        var policy = AutoPinPolicy(ttl: day)
        XCTAssertNil(policy.record(eof, host: "slow.test", now: at(0)))
        XCTAssertNil(policy.record(eof, host: "slow.test", now: at(50)))
        XCTAssertNil(policy.record(eof, host: "slow.test", now: at(100)))  // the one at 0 is 100 s old
        XCTAssertNil(policy.record(eof, host: "slow.test", now: at(160.5)))  // the one at 100 is 60.5 s old
        XCTAssertNil(policy.pin(for: "slow.test", now: at(161)))
        // Exactly 60 s apart still counts: 160.5 and 200 and 220.5.
        XCTAssertNil(policy.record(eof, host: "slow.test", now: at(200)))
        XCTAssertNotNil(policy.record(eof, host: "slow.test", now: at(220.5)))
    }

    /// A completed handshake between ambiguous failures starts the count again.
    func testCompletedHandshakeClearsAmbiguousHistory() throws {
        var policy = AutoPinPolicy(ttl: day)
        XCTAssertNil(policy.record(eof, host: "flaky.test", now: at(0)))
        XCTAssertNil(policy.record(eof, host: "flaky.test", now: at(1)))
        XCTAssertNil(policy.record(.completed, host: "FLAKY.test", now: at(2)))
        XCTAssertNil(policy.record(eof, host: "flaky.test", now: at(3)))
        XCTAssertNil(policy.record(eof, host: "flaky.test", now: at(4)))
        XCTAssertNil(policy.pin(for: "flaky.test", now: at(5)))
        let pin = try XCTUnwrap(policy.record(eof, host: "flaky.test", now: at(5)))
        XCTAssertEqual(pin.firstSeen, at(3))
    }

    /// Ambiguous failures are counted per host.
    func testAmbiguousFailuresAreCountedPerHost() {
        var policy = AutoPinPolicy(ttl: day)
        for (index, host) in ["a.test", "b.test", "c.test", "a.test", "b.test"].enumerated() {
            XCTAssertNil(policy.record(eof, host: host, now: at(Double(index))), host)
        }
        XCTAssertNotNil(policy.record(eof, host: "a.test", now: at(6)))
        XCTAssertNil(policy.pin(for: "b.test", now: at(7)))
        XCTAssertNil(policy.pin(for: "c.test", now: at(7)))
    }

    /// A failure that is no pinning signal never pins, however often, and leaves the ambiguous
    /// history alone.
    func testNotAPinSignalNeverPins() {
        var policy = AutoPinPolicy(ttl: day, ambiguousFailuresToPin: 1)
        for second in 0..<10 {
            XCTAssertNil(policy.record(.notAPinSignal, host: "reset.test", now: at(Double(second))))
        }
        XCTAssertNil(policy.pin(for: "reset.test", now: at(10)))

        var counting = AutoPinPolicy(ttl: day)
        XCTAssertNil(counting.record(eof, host: "x.test", now: at(0)))
        XCTAssertNil(counting.record(eof, host: "x.test", now: at(1)))
        XCTAssertNil(counting.record(.notAPinSignal, host: "x.test", now: at(2)))
        XCTAssertNotNil(counting.record(eof, host: "x.test", now: at(3)))
    }

    /// A pin applies until `lastSeen + ttl`, not at it; then the host is intercepted again.
    func testPinsExpireAfterTheTTL() {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "pinned.test", now: at(0)))
        XCTAssertNotNil(policy.pin(for: "pinned.test", now: at(3599.999)))
        XCTAssertNil(policy.pin(for: "pinned.test", now: at(3600)))
        XCTAssertNil(policy.pin(for: "pinned.test", now: at(7200)))
    }

    /// Another failure of a pinned host moves `lastSeen` (and so the expiry) and counts; a
    /// rejection also takes the newer reason, an ambiguous EOF keeps the pin's.
    func testRepeatedFailureOfAPinnedHostUpdatesThePin() throws {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "pinned.test", now: at(0)))
        let second = try XCTUnwrap(policy.record(eof, host: "pinned.test", now: at(3000)))
        XCTAssertEqual([second.firstSeen, second.lastSeen], [at(0), at(3000)])
        XCTAssertEqual(second.count, 2)
        XCTAssertTrue(second.reason.contains("UNKNOWN_CA"))
        XCTAssertNotNil(policy.pin(for: "pinned.test", now: at(6000)))  // past the first expiry

        let badCertificate = HandshakeOutcome.rejected(reason: "client rejected the certificate (bad_certificate)",
                                                       evidence: "SSLV3_ALERT_BAD_CERTIFICATE")
        let third = try XCTUnwrap(policy.record(badCertificate, host: "pinned.test", now: at(6000)))
        XCTAssertEqual(third.count, 3)
        XCTAssertEqual(third.firstSeen, at(0))
        XCTAssertEqual(third.reason, "client rejected the certificate (bad_certificate)")
        XCTAssertEqual(third.evidence, "SSLV3_ALERT_BAD_CERTIFICATE")
        XCTAssertEqual(policy.pin(for: "pinned.test", now: at(6001)), third)
    }

    /// An expired pin is dropped: the next failure starts a new pin (count 1, new `firstSeen`),
    /// and an ambiguous EOF needs its three failures again.
    func testExpiredPinIsDroppedNotRenewed() throws {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "a.test", now: at(0)))
        XCTAssertNotNil(policy.record(unknownCA, host: "b.test", now: at(0)))
        let renewed = try XCTUnwrap(policy.record(unknownCA, host: "a.test", now: at(4000)))
        XCTAssertEqual([renewed.firstSeen, renewed.lastSeen], [at(4000), at(4000)])
        XCTAssertEqual(renewed.count, 1)
        XCTAssertNil(policy.record(eof, host: "b.test", now: at(4000)))
        XCTAssertNil(policy.pin(for: "b.test", now: at(4001)))
    }

    /// A completed handshake does not lift a live pin (a handshake that started before the pin).
    func testCompletedHandshakeKeepsALivePin() {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "pinned.test", now: at(0)))
        XCTAssertNil(policy.record(.completed, host: "pinned.test", now: at(1)))
        XCTAssertNotNil(policy.pin(for: "pinned.test", now: at(2)))
    }

    /// `load` replaces the pins held, matches hosts whatever their stored case, keeps the newest
    /// of two pins for one host, and loaded pins expire like recorded ones.
    func testLoadReplacesPins() {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "before.test", now: at(0)))
        let older = PinnedDomain(host: "Loaded.test", reason: "old", evidence: "e", firstSeen: at(0),
                                 lastSeen: at(10), count: 1)
        var newer = older
        newer.reason = "new"
        newer.lastSeen = at(20)
        policy.load([newer, older])
        XCTAssertNil(policy.pin(for: "before.test", now: at(30)))
        XCTAssertEqual(policy.pin(for: "LOADED.TEST", now: at(30))?.reason, "new")
        XCTAssertNil(policy.pin(for: "loaded.test", now: at(3620)))
    }

    /// `remove` forgets one host (its pin and its ambiguous history), `removeAll` every host.
    func testRemove() {
        var policy = AutoPinPolicy(ttl: 3600)
        XCTAssertNotNil(policy.record(unknownCA, host: "a.test", now: at(0)))
        XCTAssertNotNil(policy.record(unknownCA, host: "b.test", now: at(0)))
        XCTAssertNil(policy.record(eof, host: "c.test", now: at(0)))
        XCTAssertNil(policy.record(eof, host: "c.test", now: at(1)))
        XCTAssertEqual(policy.remove(host: "A.test").map(\.host), ["a.test"])
        XCTAssertEqual(policy.remove(host: "a.test"), [])
        XCTAssertNil(policy.pin(for: "a.test", now: at(2)))
        XCTAssertNotNil(policy.pin(for: "b.test", now: at(2)))
        policy.remove(host: "c.test")
        XCTAssertNil(policy.record(eof, host: "c.test", now: at(2)))  // history gone: 1 of 3

        policy.removeAll()
        XCTAssertNil(policy.pin(for: "b.test", now: at(3)))
        XCTAssertEqual(policy.hostsWithAmbiguousFailures, 0)
    }

    /// Hosts that failed once long ago are swept once many accumulate, and a sweep never loses
    /// a recent failure.
    func testStaleAmbiguousHistoriesAreSwept() throws {
        var policy = AutoPinPolicy(ttl: day)
        for index in 0..<1024 {
            XCTAssertNil(policy.record(eof, host: "stale-\(index).test", now: at(0)))
        }
        XCTAssertNil(policy.record(eof, host: "recent.test", now: at(100)))
        XCTAssertNil(policy.record(eof, host: "recent.test", now: at(101)))
        XCTAssertEqual(policy.hostsWithAmbiguousFailures, 1)
        XCTAssertNotNil(policy.record(eof, host: "recent.test", now: at(102)))
    }

    // MARK: bounds

    /// The table holds `maximumPins`; a new pin evicts the one seen longest ago (an expired one
    /// first), and the evicted pins are reported for storage.
    func testPinTableIsBoundedAndEvictsTheOldest() throws {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 3, newPinsPerClientPerMinute: 100))
        for index in 0..<3 {
            XCTAssertEqual(policy.record(unknownCA, host: "h\(index).test", client: "10.0.0.1:1", now: at(Double(index))).evicted, [])
        }
        _ = policy.record(eof, host: "h0.test", client: "10.0.0.1:1", now: at(10))  // renews h0: h1 is now the oldest
        let change = policy.record(unknownCA, host: "h3.test", client: "10.0.0.1:1", now: at(11))
        guard case .pinned(let pin) = change.update else { return XCTFail("\(change)") }
        XCTAssertEqual(pin.host, "h3.test")
        XCTAssertEqual(change.evicted.map(\.host), ["h1.test"])
        XCTAssertEqual(policy.count, 3)
        XCTAssertNil(policy.pin(for: "h1.test", now: at(12)))
        XCTAssertNotNil(policy.pin(for: "h0.test", now: at(12)))
    }

    /// Many hosts from one client: the table never grows past its bound, whatever the client does.
    func testManyHostsFromOneClientStayBounded() {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 50, newPinsPerClientPerMinute: 10))
        var pinned = 0
        var refused = 0
        for index in 0..<5_000 {
            // One host a second for 5,000 s: 10 new pins a minute get through.
            switch policy.record(unknownCA, host: "h\(index).test", client: "10.0.0.9:\(index)", now: at(Double(index))).update {
            case .pinned: pinned += 1
            case .refused: refused += 1
            default: XCTFail("host \(index)")
            }
            XCTAssertLessThanOrEqual(policy.count, 50)
        }
        XCTAssertEqual(pinned, 840)  // 10 at the start of every minute: 83 whole minutes and the 84th begun
        XCTAssertEqual(refused, 5_000 - pinned)
        XCTAssertEqual(policy.count, 50)
    }

    /// New pins are limited per client address (the port does not matter); renewals are not.
    func testNewPinsAreRateLimitedPerClient() {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 100, newPinsPerClientPerMinute: 2))
        XCTAssertNotNil(policy.record(unknownCA, host: "a.test", client: "10.0.0.1:1000", now: at(0)).changedPin)
        XCTAssertNotNil(policy.record(unknownCA, host: "b.test", client: "10.0.0.1:1001", now: at(1)).changedPin)
        XCTAssertEqual(policy.record(unknownCA, host: "c.test", client: "10.0.0.1:1002", now: at(2)).update,
                       .refused("not pinned: 10.0.0.1 made 2 new pins in the last minute (--pin-rate)"))
        XCTAssertNil(policy.pin(for: "c.test", now: at(3)))
        guard case .renewed = policy.record(unknownCA, host: "a.test", client: "10.0.0.1:1003", now: at(3)).update else {
            return XCTFail("a renewal is not a new pin")
        }
        XCTAssertNotNil(policy.record(unknownCA, host: "c.test", client: "10.0.0.2:1000", now: at(4)).changedPin,
                        "another client has its own allowance")
        XCTAssertNotNil(policy.record(unknownCA, host: "d.test", client: "10.0.0.1:1004", now: at(60)).changedPin,
                        "a minute after its first pin, the client may pin again")
    }

    /// Three ambiguous EOFs over the rate do not pin either.
    func testAmbiguousPinsCountAgainstTheRate() {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 100, newPinsPerClientPerMinute: 1))
        XCTAssertNotNil(policy.record(unknownCA, host: "a.test", client: "10.0.0.1:1", now: at(0)).changedPin)
        for second in 1...2 {
            XCTAssertEqual(policy.record(eof, host: "b.test", client: "10.0.0.1:1", now: at(Double(second))).update, .unchanged)
        }
        guard case .refused = policy.record(eof, host: "b.test", client: "10.0.0.1:1", now: at(3)).update else {
            return XCTFail("the third EOF should have been refused")
        }
    }

    /// Clients are keyed by address without the port; IPv6 by /64.
    func testClientKeys() {
        XCTAssertEqual(PinRateLimit.clientKey("10.0.0.7:5000"), "10.0.0.7")
        XCTAssertEqual(PinRateLimit.clientKey("[2001:db8::1]:5000"), "2001:db8::/64")
        XCTAssertEqual(PinRateLimit.clientKey("[2001:db8:0:0:ffff::2]:1"), "2001:db8::/64")
        XCTAssertEqual(PinRateLimit.clientKey("[2001:db8:0:1::1]:1"), "2001:db8:0:1::/64")
        XCTAssertEqual(PinRateLimit.clientKey("[::1]:9"), "::/64")
        XCTAssertEqual(PinRateLimit.clientKey("no address"), "no address")
        XCTAssertEqual(PinRateLimit.clientKey(""), "")
    }

    /// Clients with no recent pin are swept once many accumulate.
    func testRateTableIsSwept() {
        var rate = PinRateLimit(perMinute: 1)
        for index in 0..<300 {
            XCTAssertTrue(rate.admit(client: "10.0.\(index / 256).\(index % 256):1", now: at(0)))
        }
        for index in 0..<300 {
            XCTAssertTrue(rate.admit(client: "10.9.\(index / 256).\(index % 256):1", now: at(120)))
        }
        XCTAssertEqual(rate.trackedClients, 300, "the 300 clients of two minutes ago were swept")
    }

    /// `load` keeps the newest `maximumPins` and returns the rest.
    func testLoadKeepsTheNewestWithinTheLimit() {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 2))
        let pins = (0..<4).map {
            PinnedDomain(host: "h\($0).test", reason: "r", evidence: "e", firstSeen: at(0), lastSeen: at(Double($0)), count: 1)
        }
        XCTAssertEqual(policy.load(pins).map(\.host), ["h0.test", "h1.test"])
        XCTAssertEqual(policy.count, 2)
        XCTAssertNotNil(policy.pin(for: "h3.test", now: at(5)))
    }

    /// Ambiguous histories are bounded too: with the table full of recent ones, a new host is
    /// not tracked (and so cannot grow memory); once they are stale, tracking resumes.
    func testAmbiguousHistoriesAreBounded() {
        var policy = AutoPinPolicy(ttl: day, limits: .init(maximumPins: 10, newPinsPerClientPerMinute: 100))
        for index in 0..<100 {
            _ = policy.record(eof, host: "h\(index).test", client: "10.0.0.1:1", now: at(0))
        }
        XCTAssertLessThanOrEqual(policy.hostsWithAmbiguousFailures, 10)
        _ = policy.record(eof, host: "late.test", client: "10.0.0.1:1", now: at(100))
        XCTAssertEqual(policy.hostsWithAmbiguousFailures, 1)
    }
}

/// The tests above predate client identities: a client is an address whose one fingerprint has
/// completed a handshake (on another host) just before each outcome, and a pin is looked up for
/// any client.
private extension AutoPinPolicy {
    static func identity(_ client: String) -> ClientIdentity {
        ClientIdentity(connectedFrom: client, fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
    }

    mutating func record(_ outcome: HandshakeOutcome, host: String, now: Date) -> PinnedDomain? {
        record(outcome, host: host, client: "127.0.0.1:1", now: now).changedPin
    }

    mutating func record(_ outcome: HandshakeOutcome, host: String, client: String, now: Date) -> Change {
        _ = record(.completed, host: "trusted.invalid", client: Self.identity(client), now: now)
        return record(outcome, host: host, client: Self.identity(client), now: now)
    }

    func pin(for host: String, now: Date) -> PinnedDomain? {
        pins(for: host, now: now).first
    }
}
