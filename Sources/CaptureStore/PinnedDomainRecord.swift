import Foundation
import GRDB
import ProxyModel

/// A `PinnedDomain` as a row of `pinned_domains`: owns the column names and the conversions
/// (dates to epoch milliseconds), so the model stays free of GRDB.
struct PinnedDomainRecord {
    var pin: PinnedDomain

    /// The columns of `pinned_domains`, named as in `TrafficMigrations`, in the order
    /// `arguments` lists their values.
    enum Columns {
        static let host = Column("host")
        static let reason = Column("reason")
        static let evidence = Column("evidence")
        static let firstSeen = Column("first_seen")
        static let lastSeen = Column("last_seen")
        static let count = Column("count")
        static let all = [host, reason, evidence, firstSeen, lastSeen, count]
    }

    /// The values of `Columns.all` for an insert.
    var arguments: StatementArguments {
        [pin.host, pin.reason, pin.evidence, FlowRecord.milliseconds(pin.firstSeen),
         FlowRecord.milliseconds(pin.lastSeen), pin.count]
    }
}

extension PinnedDomainRecord: FetchableRecord, TableRecord {
    static let databaseTableName = "pinned_domains"

    init(row: Row) throws {
        pin = PinnedDomain(
            host: try row.decode(forColumn: Columns.host),
            reason: try row.decode(forColumn: Columns.reason),
            evidence: try row.decode(forColumn: Columns.evidence),
            firstSeen: FlowRecord.date(milliseconds: try row.decode(forColumn: Columns.firstSeen)),
            lastSeen: FlowRecord.date(milliseconds: try row.decode(forColumn: Columns.lastSeen)),
            count: try row.decode(forColumn: Columns.count))
    }
}
