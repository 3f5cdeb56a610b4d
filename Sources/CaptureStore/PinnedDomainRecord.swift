import Foundation
import GRDB
import ProxyModel

/// A `PinnedDomain` as a row of `pinned_domains`: owns the column names and the conversions
/// (dates to epoch milliseconds, "any client" to empty address and fingerprint), so the model
/// stays free of GRDB.
struct PinnedDomainRecord {
    var pin: PinnedDomain

    /// The columns of `pinned_domains`, named as in `TrafficMigrations`, in the order
    /// `arguments` lists their values.
    enum Columns {
        static let host = Column("host")
        static let clientAddress = Column("client_address")
        static let clientFingerprint = Column("client_fingerprint")
        static let reason = Column("reason")
        static let evidence = Column("evidence")
        static let alert = Column("alert")
        static let tlsVersion = Column("tls_version")
        static let firstSeen = Column("first_seen")
        static let lastSeen = Column("last_seen")
        static let count = Column("count")
        static let all = [host, clientAddress, clientFingerprint, reason, evidence, alert, tlsVersion, firstSeen, lastSeen,
                          count]
    }

    /// The values of `Columns.all` for an insert.
    var arguments: StatementArguments {
        let key = Self.keyValues(pin.key)
        return [key.host, key.address, key.fingerprint, pin.reason, pin.evidence, pin.alert, pin.tlsVersion,
                FlowRecord.milliseconds(pin.firstSeen), FlowRecord.milliseconds(pin.lastSeen), pin.count]
    }

    /// The primary key's column values for `key`: an "any client" pin has `''` for both.
    static func keyValues(_ key: PinnedDomain.Key) -> (host: String, address: String, fingerprint: String) {
        (key.host, key.client?.address ?? "", key.client?.fingerprint ?? "")
    }
}

extension PinnedDomainRecord: FetchableRecord, TableRecord {
    static let databaseTableName = "pinned_domains"

    init(row: Row) throws {
        let address: String = try row.decode(forColumn: Columns.clientAddress)
        let fingerprint: String = try row.decode(forColumn: Columns.clientFingerprint)
        pin = PinnedDomain(
            host: try row.decode(forColumn: Columns.host),
            reason: try row.decode(forColumn: Columns.reason),
            evidence: try row.decode(forColumn: Columns.evidence),
            firstSeen: FlowRecord.date(milliseconds: try row.decode(forColumn: Columns.firstSeen)),
            lastSeen: FlowRecord.date(milliseconds: try row.decode(forColumn: Columns.lastSeen)),
            count: try row.decode(forColumn: Columns.count),
            client: address.isEmpty && fingerprint.isEmpty ? nil : ClientIdentity(address: address, fingerprint: fingerprint),
            alert: try row.decode(forColumn: Columns.alert),
            tlsVersion: try row.decode(forColumn: Columns.tlsVersion))
    }
}
