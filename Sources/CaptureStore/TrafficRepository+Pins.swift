import Foundation
import GRDB
import ProxyModel

/// The pinned hosts (`pinned_domains`): per host and client, the hosts the proxy passes through
/// untouched because that client refuses our certificates. Written by `PersistentPinRegistry`
/// in the background and by `proxyapp pins`; like every repository method, these block on I/O.
extension TrafficRepository {
    /// Every stored pin, expired ones included, ordered by host, then client.
    public func pinnedDomains() throws -> [PinnedDomain] {
        try database.pool.read(Self.orderedPins)
    }

    private static func orderedPins(_ db: Database) throws -> [PinnedDomain] {
        typealias Columns = PinnedDomainRecord.Columns
        return try PinnedDomainRecord.order(Columns.host, Columns.clientAddress, Columns.clientFingerprint).fetchAll(db)
            .map(\.pin)
    }

    /// Every stored pin and the change count they belong to, read together.
    public func pinnedDomainsAndChangeCount() throws -> (pins: [PinnedDomain], changeCount: Int64) {
        try database.pool.read { db in
            (try Self.orderedPins(db), try Self.pinChangeCount(db))
        }
    }

    /// How many inserts, updates and deletes `pinned_domains` has seen (`pin_changes`): equal
    /// counts mean equal tables. One indexed row: cheap enough to ask every few seconds.
    public func pinChangeCount() throws -> Int64 {
        try database.pool.read(Self.pinChangeCount)
    }

    private static func pinChangeCount(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT version FROM pin_changes WHERE id = 1") ?? 0
    }

    /// Stores `pins` and removes the pins keyed `removing` in one transaction. Returns the change
    /// count before and after: when `before` is what the caller last saw, no one else changed
    /// the table in between.
    @discardableResult
    public func applyPinChanges(saving pins: [PinnedDomain], removing keys: [PinnedDomain.Key]) throws
        -> (before: Int64, after: Int64) {
        try database.pool.write { db in
            let before = try Self.pinChangeCount(db)
            let statement = try db.cachedStatement(sql: Self.upsertPinSQL)
            for pin in pins {
                try statement.execute(arguments: PinnedDomainRecord(pin: pin).arguments)
            }
            let delete = try db.cachedStatement(sql: Self.deletePinSQL)
            for key in keys {
                let values = PinnedDomainRecord.keyValues(key)
                try delete.execute(arguments: [values.host, values.address, values.fingerprint])
            }
            return (before, try Self.pinChangeCount(db))
        }
    }

    /// Stores `pin`, replacing the stored pin for its host and client if there is one.
    public func savePin(_ pin: PinnedDomain) throws {
        try savePins([pin])
    }

    /// Stores `pins` in one transaction, each replacing the stored pin for its host and client.
    public func savePins(_ pins: [PinnedDomain]) throws {
        guard !pins.isEmpty else { return }
        try applyPinChanges(saving: pins, removing: [])
    }

    private static let upsertPinSQL: String = {
        let columns = PinnedDomainRecord.Columns.all.map(\.name)
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO pinned_domains (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }()

    private static let deletePinSQL =
        "DELETE FROM pinned_domains WHERE host = ? AND client_address = ? AND client_fingerprint = ?"

    /// Removes the pins of `host` for every client, or only those of clients connecting from
    /// `clientAddress` (an IP; a port, `ip:port` or `[v6]:port`, is ignored). `host` is compared
    /// as stored, in `HostName.normalized` form: the caller normalizes what a user typed. Returns
    /// how many were removed.
    @discardableResult
    public func removePins(host: String, clientAddress: String? = nil) throws -> Int {
        try database.pool.write { db in
            var request = PinnedDomainRecord.filter(PinnedDomainRecord.Columns.host == host)
            if let clientAddress {
                request = request.filter(
                    PinnedDomainRecord.Columns.clientAddress == ClientIdentity.addressWithoutPort(clientAddress))
            }
            return try request.deleteAll(db)
        }
    }

    /// Removes the one pin keyed `key`. Returns false when there was none.
    @discardableResult
    public func removePin(_ key: PinnedDomain.Key) throws -> Bool {
        let counts = try applyPinChanges(saving: [], removing: [key])
        return counts.after != counts.before  // the delete trigger counts removed rows only
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
