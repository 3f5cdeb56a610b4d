import Foundation
import GRDB
import ProxyCore
import ProxyModel

/// The pinned hosts (`pinned_domains`): the hosts the proxy passes through untouched because
/// their clients refuse our certificates. Written by `PersistentPinRegistry` in the background
/// and by `proxyapp pins`; like every repository method, these block on I/O.
extension TrafficRepository {
    /// Every stored pin, expired ones included, ordered by host.
    public func pinnedDomains() throws -> [PinnedDomain] {
        try database.pool.read { db in
            try PinnedDomainRecord.order(PinnedDomainRecord.Columns.host).fetchAll(db).map(\.pin)
        }
    }

    /// Stores `pin`, replacing the stored pin for its host if there is one.
    public func savePin(_ pin: PinnedDomain) throws {
        try savePins([pin])
    }

    /// Stores `pins` in one transaction, each replacing the stored pin for its host.
    public func savePins(_ pins: [PinnedDomain]) throws {
        guard !pins.isEmpty else { return }
        try database.pool.write { db in
            let statement = try db.cachedStatement(sql: Self.upsertPinSQL)
            for pin in pins {
                try statement.execute(arguments: PinnedDomainRecord(pin: pin).arguments)
            }
        }
    }

    private static let upsertPinSQL: String = {
        let columns = PinnedDomainRecord.Columns.all.map(\.name)
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO pinned_domains (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }()

    /// Removes the pin for `host` (compared case-insensitively). Returns false when it was not pinned.
    @discardableResult
    public func removePin(host: String) throws -> Bool {
        try database.pool.write { db in
            try PinnedDomainRecord.deleteOne(db, key: HostName.normalized(host))
        }
    }

    /// Removes every pin and returns how many there were.
    @discardableResult
    public func removeAllPins() throws -> Int {
        try database.pool.write { db in
            try PinnedDomainRecord.deleteAll(db)
        }
    }

    /// Removes the pins whose last failure is at or before `cutoff`, and returns how many. Pass
    /// `now - ttl`: that removes the pins `PinnedDomain.isExpired(ttl:now:)` calls expired (to the
    /// millisecond, the precision of stored times).
    @discardableResult
    public func removePins(expiredBefore cutoff: Date) throws -> Int {
        try database.pool.write { db in
            try PinnedDomainRecord
                .filter(PinnedDomainRecord.Columns.lastSeen <= FlowRecord.milliseconds(cutoff))
                .deleteAll(db)
        }
    }
}
