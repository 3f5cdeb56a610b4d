import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// Schema v6 (`v6-pins-per-client`): pins stored before it become pins for every client.
final class PinsPerClientMigrationTests: XCTestCase {
    /// A v5 pin reads back as an "any client" pin with its times and evidence, the change
    /// counter still counts (its triggers were rebuilt) and moved, and per-client pins of the
    /// same host can be added beside it.
    func testVersion5PinsBecomeAnyClientPins() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        let queue = try DatabaseQueue(path: path)
        try TrafficMigrations.migrator.migrate(queue, upTo: "v5-pin-changes")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO pinned_domains (host, reason, evidence, first_seen, last_seen, count)
                VALUES ('bank.test', 'client sent unknown_ca after our certificate (TLS 1.3)', 'e', 1763760000000,
                        1763760060000, 2)
                """)
        }
        let countBefore = try queue.read { db in try Int64.fetchOne(db, sql: "SELECT version FROM pin_changes") }
        try queue.close()

        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let migrated = PinnedDomain(host: "bank.test", reason: "client sent unknown_ca after our certificate (TLS 1.3)",
                                    evidence: "e", firstSeen: Date(timeIntervalSince1970: 1_763_760_000),
                                    lastSeen: Date(timeIntervalSince1970: 1_763_760_060), count: 2)
        XCTAssertEqual(try repository.pinnedDomains(), [migrated])
        XCTAssertNil(migrated.client)
        let afterMigration = try repository.pinChangeCount()
        XCTAssertGreaterThan(afterMigration, countBefore ?? 0, "a running proxy re-reads the pins")

        var perClient = migrated
        perClient.client = ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
        try repository.savePin(perClient)
        XCTAssertEqual(try repository.pinnedDomains(), [migrated, perClient])
        XCTAssertGreaterThan(try repository.pinChangeCount(), afterMigration, "the triggers count on the new table")
        XCTAssertEqual(try repository.removePins(host: "bank.test"), 2)
    }
}
