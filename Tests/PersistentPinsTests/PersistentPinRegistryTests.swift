import CaptureStore
import CaptureTestSupport
import Foundation
import GRDB
import InMemoryLogging
import Logging
import ProxyCore
import ProxyModel
import TestSupport
import XCTest

@testable import PersistentPins

/// The registry the engine talks to: answers from memory, persists in the background, reloads.
final class PersistentPinRegistryTests: XCTestCase {
    private let day: TimeInterval = 86_400
    private let start = Date(timeIntervalSince1970: 1_763_760_000)
    private let client = "127.0.0.1:5000"
    private let unknownCA = HandshakeOutcome.rejected(reason: "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
                                                      evidence: "TLSV1_ALERT_UNKNOWN_CA")

    /// A clock the test moves by hand.
    private final class TestClock: @unchecked Sendable {
        private let lock = NSLock()
        private var time: Date

        init(_ start: Date) {
            time = start
        }

        var now: Date {
            lock.withLock { time }
        }

        func advance(by seconds: TimeInterval) {
            lock.withLock { time = time.addingTimeInterval(seconds) }
        }
    }

    /// A path for a new capture file in a directory removed when the test ends.
    private func makeCapturePath() throws -> String {
        try makeTemporaryDirectory().file("capture.sqlite")
    }

    private func makeRegistry(_ repository: TrafficRepository, clock: TestClock, ttl: TimeInterval? = nil,
                              limits: AutoPinPolicy.Limits = .init(),
                              logger: Logger = Logger(label: "test.pins")) throws -> PersistentPinRegistry {
        try PersistentPinRegistry(repository: repository, ttl: ttl ?? 7 * day, limits: limits, logger: logger,
                                  refreshInterval: nil, now: { clock.now })
    }

    /// A registry over a new capture file whose log the test reads, with the file's path and a
    /// repository on it.
    private func makeLoggedRegistryOverAFile() throws
        -> (path: String, repository: TrafficRepository, registry: PersistentPinRegistry, log: InMemoryLogHandler) {
        let path = try makeCapturePath()
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let log = InMemoryLogHandler()
        let logger = Logger(label: "test.pins") { _ in log }
        return (path, repository, try makeRegistry(repository, clock: TestClock(start), logger: logger), log)
    }

    /// Pins recorded (and updated) in one registry are in the file after `flush`, and a new
    /// registry over the same file, as after a restart, applies them.
    func testRecordedPinsPersistAndReload() throws {
        let path = try makeCapturePath()
        let clock = TestClock(start)
        do {
            let registry = try makeRegistry(TrafficRepository(database: try TrafficDatabase(path: path)), clock: clock)
            registry.record(unknownCA, host: "Pinned.Example", client: client)
            clock.advance(by: 10)
            registry.record(.ambiguousEOF(evidence: "EOF during handshake"), host: "pinned.example", client: client)
            for _ in 0..<3 {
                registry.record(.ambiguousEOF(evidence: "EOF during handshake"), host: "node.example", client: client)
            }
            registry.record(.ambiguousEOF(evidence: "EOF during handshake"), host: "once.example", client: client)
            registry.record(.completed, host: "fine.example", client: client)
            registry.flush()
        }
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let stored = try repository.pinnedDomains()
        XCTAssertEqual(stored.map(\.host), ["node.example", "pinned.example"])
        XCTAssertEqual(stored.last?.count, 2)
        XCTAssertEqual(stored.last?.firstSeen, start)
        XCTAssertEqual(stored.last?.lastSeen, start.addingTimeInterval(10))

        let restarted = try makeRegistry(repository, clock: clock)
        XCTAssertEqual(restarted.pin(for: "PINNED.example"), stored.last)
        XCTAssertEqual(restarted.pin(for: "node.example")?.count, 3)
        XCTAssertNil(restarted.pin(for: "once.example"))
        XCTAssertNil(restarted.pin(for: "fine.example"))
    }

    /// A pin stops applying `ttl` after its last failure; a registry opened later drops the
    /// expired pins, from the file too.
    func testPinsExpire() throws {
        let repository = try makeRepository()
        let clock = TestClock(start)
        let registry = try makeRegistry(repository, clock: clock, ttl: 3600)
        registry.record(unknownCA, host: "a.example", client: client)
        clock.advance(by: 1800)
        registry.record(unknownCA, host: "b.example", client: client)
        registry.flush()
        clock.advance(by: 1799)
        XCTAssertNotNil(registry.pin(for: "a.example"))
        clock.advance(by: 1)
        XCTAssertNil(registry.pin(for: "a.example"))
        XCTAssertNotNil(registry.pin(for: "b.example"))

        let reopened = try makeRegistry(repository, clock: clock, ttl: 3600)
        XCTAssertNil(reopened.pin(for: "a.example"))
        XCTAssertNotNil(reopened.pin(for: "b.example"))
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["b.example"])
    }

    /// The engine's calls answer from memory while another connection holds the database's
    /// write lock: the pin applies at once, reaches the file only after the lock is released,
    /// and no error is logged (a synchronous write would have failed with SQLITE_BUSY).
    func testEngineCallsNeverWaitForTheDatabase() throws {
        let (path, repository, registry, log) = try makeLoggedRegistryOverAFile()

        let lock = try WriteLockHolder(path: path)
        registry.record(unknownCA, host: "locked.example", client: client)
        XCTAssertEqual(registry.pin(for: "locked.example")?.count, 1)
        registry.record(unknownCA, host: "locked.example", client: client)
        XCTAssertEqual(registry.pin(for: "locked.example")?.count, 2)
        XCTAssertEqual(try repository.pinnedDomains(), [], "saved while the write lock was held")
        lock.release()

        registry.flush()
        XCTAssertEqual(try repository.pinnedDomains().map(\.count), [2])
        XCTAssertEqual(log.entries.map(\.message), [])
    }

    /// A database error is logged once per outage and never thrown; the pins still apply, and
    /// are saved with the next save once the database works again.
    func testDatabaseErrorsAreLoggedOnceAndRetried() throws {
        let (path, repository, registry, log) = try makeLoggedRegistryOverAFile()

        let other = try DatabaseQueue(path: path)
        try other.write { db in try db.execute(sql: "ALTER TABLE pinned_domains RENAME TO pinned_domains_away") }
        registry.record(unknownCA, host: "a.example", client: client)
        registry.flush()
        registry.record(unknownCA, host: "b.example", client: client)
        registry.flush()
        XCTAssertEqual(log.entries.count, 1, "\(log.entries.map(\.message))")
        XCTAssertEqual(log.entries.first?.level, .error)
        XCTAssertNotNil(registry.pin(for: "a.example"))

        try other.write { db in try db.execute(sql: "ALTER TABLE pinned_domains_away RENAME TO pinned_domains") }
        registry.record(unknownCA, host: "c.example", client: client)
        registry.flush()
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["a.example", "b.example", "c.example"])
        XCTAssertEqual(log.entries.count, 1)
    }

    /// `reload` applies what another process changed in the file (`proxyapp pins remove`, a pin
    /// saved elsewhere) and keeps changes not saved yet.
    func testReloadAppliesChangesMadeInTheFile() throws {
        let path = try makeCapturePath()
        let clock = TestClock(start)
        let registry = try makeRegistry(TrafficRepository(database: try TrafficDatabase(path: path)), clock: clock)
        registry.record(unknownCA, host: "removed.example", client: client)
        registry.record(unknownCA, host: "kept.example", client: client)
        registry.flush()

        let cli = TrafficRepository(database: try TrafficDatabase(path: path))
        XCTAssertEqual(try cli.removePins(host: "removed.example"), 1)
        try cli.savePin(PinnedDomain(host: "added.example", reason: "r", evidence: "e", firstSeen: clock.now,
                                     lastSeen: clock.now, count: 1))
        XCTAssertNotNil(registry.pin(for: "removed.example"))
        registry.reload()
        XCTAssertNil(registry.pin(for: "removed.example"))
        XCTAssertNotNil(registry.pin(for: "kept.example"))
        XCTAssertEqual(registry.pin(for: "added.example")?.reason, "r")
    }

    // MARK: bounds and change detection

    /// The periodic refresh reads one change count; the table itself is read again only when
    /// someone else changed it. Was: the whole table every 5 s (~1 core-second per 20 s at
    /// 63,000 pins).
    func testRefreshReadsTheTableOnlyWhenItChanged() throws {
        let path = try makeCapturePath()
        let clock = TestClock(start)
        let registry = try makeRegistry(TrafficRepository(database: try TrafficDatabase(path: path)), clock: clock)
        XCTAssertEqual(registry.tableReadCount, 1, "the load at start")
        registry.record(unknownCA, host: "own.example", client: client)
        registry.flush()
        for _ in 0..<5 { registry.refresh() }
        XCTAssertEqual(registry.tableReadCount, 1, "our own saves and idle refreshes read no table")

        let cli = TrafficRepository(database: try TrafficDatabase(path: path))
        XCTAssertEqual(try cli.removePins(host: "own.example"), 1)
        registry.refresh()
        XCTAssertEqual(registry.tableReadCount, 2, "a change made elsewhere is read once")
        XCTAssertNil(registry.pin(for: "own.example"))
        registry.refresh()
        XCTAssertEqual(registry.tableReadCount, 2)

        // A change elsewhere between two of our saves is not mistaken for ours.
        registry.record(unknownCA, host: "a.example", client: client)
        registry.flush()
        try cli.savePin(PinnedDomain(host: "cli.example", reason: "r", evidence: "e", firstSeen: clock.now,
                                     lastSeen: clock.now, count: 1))
        registry.record(unknownCA, host: "b.example", client: client)
        registry.flush()
        registry.refresh()
        XCTAssertEqual(registry.pin(for: "cli.example")?.reason, "r")
        XCTAssertEqual(registry.tableReadCount, 3)
    }

    /// Pins evicted to stay within `maximumPins` leave the file too.
    func testEvictedPinsAreDeletedFromTheFile() throws {
        let repository = try makeRepository()
        let clock = TestClock(start)
        let registry = try makeRegistry(repository, clock: clock, limits: .init(maximumPins: 2))
        for host in ["a.example", "b.example", "c.example"] {
            registry.record(unknownCA, host: host, client: client)
            clock.advance(by: 1)
        }
        registry.flush()
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["b.example", "c.example"])
    }

    /// A file holding more pins than the limit (an older version, another process) is cut to
    /// the newest at start.
    func testOpeningOverTheLimitKeepsTheNewest() throws {
        let repository = try makeRepository()
        let clock = TestClock(start)
        try repository.savePins((0..<5).map {
            PinnedDomain(host: "h\($0).example", reason: "r", evidence: "e", firstSeen: start,
                         lastSeen: start.addingTimeInterval(Double($0)), count: 1)
        })
        let registry = try makeRegistry(repository, clock: clock, limits: .init(maximumPins: 3))
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["h2.example", "h3.example", "h4.example"])
        XCTAssertNil(registry.pin(for: "h0.example"))
        XCTAssertNotNil(registry.pin(for: "h4.example"))
    }

    /// A pin over the client's rate is refused, reported, and neither applied nor saved.
    func testPinsOverTheRateAreRefused() throws {
        let repository = try makeRepository()
        let registry = try makeRegistry(repository, clock: TestClock(start),
                                        limits: .init(maximumPins: 10, newPinsPerClientPerMinute: 1))
        guard case .pinned = registry.record(unknownCA, host: "a.example", client: client) else { return XCTFail() }
        guard case .refused(let why) = registry.record(unknownCA, host: "b.example", client: "127.0.0.1:6000") else {
            return XCTFail("a second new pin from 127.0.0.1 within the minute should be refused")
        }
        XCTAssertTrue(why.contains("127.0.0.1"), why)
        registry.flush()
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["a.example"])
        XCTAssertNil(registry.pin(for: "b.example"))
    }
}

/// Another connection holding the database's write lock (an open IMMEDIATE transaction) on its
/// own thread, until `release`.
private final class WriteLockHolder: Sendable {
    private let locked = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        Thread.detachNewThread { [locked, released, finished] in
            try? queue.inTransaction(.immediate) { _ in
                locked.signal()
                _ = released.wait(timeout: .now() + 60)
                return .rollback
            }
            finished.signal()
        }
        guard locked.wait(timeout: .now() + 30) == .success else {
            throw CaptureStoreError.malformedRow("the lock holder did not take the write lock")
        }
    }

    func release() {
        released.signal()
        _ = finished.wait(timeout: .now() + 30)
    }
}

extension PersistentPinRegistryTests {
    /// A pin keeps its client, alert and TLS version across a restart, and its client is
    /// trusted again at once: after a restart, a pinning app that only talks to pinned hosts
    /// (no completed handshake) pins another host it refuses. A client that never completed a
    /// handshake pins nothing, before or after.
    func testPinsKeepTheirClientAndItsTrustAcrossARestart() throws {
        let path = try makeCapturePath()
        let now = Date(timeIntervalSince1970: 1_763_760_000)
        let app = ClientIdentity(address: "10.0.0.2", fingerprint: "t130409h1_cccccccccccc_dddddddddddd")
        let stranger = ClientIdentity(address: "10.0.0.3", fingerprint: "t130409h1_cccccccccccc_dddddddddddd")
        let rejection = HandshakeOutcome.rejected(reason: "client sent unknown_ca after our certificate (TLS 1.3)",
                                                  evidence: "e", alert: "unknown_ca")
        do {
            let registry = try PersistentPinRegistry(
                repository: TrafficRepository(database: try TrafficDatabase(path: path)), ttl: 86_400,
                logger: Logger(label: "test.pins"), refreshInterval: nil, now: { now })
            registry.record(.completed, host: "a.example", client: app, tlsVersion: "TLS 1.3")
            guard case .pinned = registry.record(rejection, host: "bank.example", client: app, tlsVersion: "TLS 1.3") else {
                return XCTFail("a trusted client pins")
            }
            XCTAssertEqual(registry.record(rejection, host: "bank.example", client: stranger, tlsVersion: "TLS 1.3"),
                           .untrustedClient)
            registry.flush()
        }
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let stored = try XCTUnwrap(try repository.pinnedDomains().first)
        XCTAssertEqual(try repository.pinnedDomains().count, 1)
        XCTAssertEqual(stored.client, app)
        XCTAssertEqual(stored.alert, "unknown_ca")
        XCTAssertEqual(stored.tlsVersion, "TLS 1.3")

        let restarted = try PersistentPinRegistry(repository: repository, ttl: 86_400, logger: Logger(label: "test.pins"),
                                                  refreshInterval: nil, now: { now })
        XCTAssertEqual(restarted.pin(for: "bank.example", client: app), stored)
        XCTAssertNil(restarted.pin(for: "bank.example", client: stranger))
        guard case .pinned = restarted.record(rejection, host: "pay.example", client: app, tlsVersion: "TLS 1.3") else {
            return XCTFail("the client of a stored pin is trusted after a restart")
        }
        XCTAssertEqual(restarted.record(rejection, host: "pay.example", client: stranger, tlsVersion: "TLS 1.3"),
                       .untrustedClient)
    }
}

/// The tests above predate client identities: one client (its address and one fingerprint),
/// which completed a handshake (on another host) before each outcome.
private extension PersistentPinRegistry {
    static func identity(_ client: String) -> ClientIdentity {
        ClientIdentity(connectedFrom: client, fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
    }

    @discardableResult
    func record(_ outcome: HandshakeOutcome, host: String, client: String) -> PinUpdate {
        record(.completed, host: "trusted.invalid", client: Self.identity(client), tlsVersion: "TLS 1.3")
        return record(outcome, host: host, client: Self.identity(client), tlsVersion: "TLS 1.3")
    }

    func pin(for host: String) -> PinnedDomain? {
        pin(for: host, client: Self.identity("127.0.0.1:1"))
    }
}
