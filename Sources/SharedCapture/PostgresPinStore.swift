import CaptureStore
import Foundation
import PostgresNIO
import ProxyModel

/// The pinned hosts of a shared capture (`proxyapp_pins`): every proxy writing the store saves
/// its pins here and re-reads the others' (`PersistentPinRegistry` over this store), so a host
/// one proxy learned to pass through is passed through by all; `proxyapp pins --store` and the
/// TUI list and remove them.
///
/// A pin is keyed by host and client (IP and ClientHello fingerprint), as in the local capture:
/// a device that roams between proxies on one network keeps its pins; two networks whose
/// devices share an IP and a TLS stack share pins too (the cost: a host passed through that
/// might have been intercepted, never the other way round).
///
/// Used by one thread at a time, as its session is (the registry's queue, a command);
/// `PostgresFlowStore` wraps its calls in its own lock.
public struct PostgresPinStore: PinStore, @unchecked Sendable {
    public let session: PostgresSession

    public init(session: PostgresSession) {
        self.session = session
    }

    public var pinStoreDescription: String { session.address.redacted }

    private static let columns = "host, client_address, client_fingerprint, reason, evidence, alert, tls_version, "
        + "first_seen, last_seen, count"

    public func pinnedDomains() throws -> [PinnedDomain] {
        try session.query("SELECT \(Self.columns) FROM proxyapp_pins ORDER BY host, client_address, client_fingerprint")
            .map(Self.pin(from:))
    }

    public func pinnedDomainsAndChangeCount() throws -> (pins: [PinnedDomain], changeCount: Int64) {
        // One snapshot for both: a change between the two reads would otherwise be counted as seen.
        try session.transaction {
            try session.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return (try pinnedDomains(), try pinChangeCount())
        }
    }

    public func pinChangeCount() throws -> Int64 {
        try session.query("SELECT version FROM proxyapp_pin_changes WHERE id = 1").first?.decode(Int64.self) ?? 0
    }

    @discardableResult
    public func applyPinChanges(saving pins: [PinnedDomain], removing keys: [PinnedDomain.Key]) throws
        -> (before: Int64, after: Int64) {
        try session.transaction {
            // The counter's row lock orders concurrent changes, so `before` is the count this
            // change started from.
            let before = try session.query("SELECT version FROM proxyapp_pin_changes WHERE id = 1 FOR UPDATE")
                .first?.decode(Int64.self) ?? 0
            for pin in pins {
                var binds = PostgresBindings()
                binds.append(pin.host)
                binds.append(pin.client?.address ?? "")
                binds.append(pin.client?.fingerprint ?? "")
                binds.append(PostgresFlowCodec.text(pin.reason))
                binds.append(PostgresFlowCodec.text(pin.evidence))
                binds.append(PostgresFlowCodec.text(pin.alert))
                binds.append(PostgresFlowCodec.text(pin.tlsVersion))
                binds.append(CaptureTime.milliseconds(pin.firstSeen))
                binds.append(CaptureTime.milliseconds(pin.lastSeen))
                binds.append(pin.count)
                try session.query("""
                    INSERT INTO proxyapp_pins (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                    ON CONFLICT (host, client_address, client_fingerprint) DO UPDATE SET reason = $4, evidence = $5,
                      alert = $6, tls_version = $7, first_seen = $8, last_seen = $9, count = $10
                    """, binds)
            }
            for key in keys {
                var binds = PostgresBindings()
                binds.append(key.host)
                binds.append(key.client?.address ?? "")
                binds.append(key.client?.fingerprint ?? "")
                try session.query(
                    "DELETE FROM proxyapp_pins WHERE host = $1 AND client_address = $2 AND client_fingerprint = $3", binds)
            }
            return (before, try pinChangeCount())
        }
    }

    @discardableResult
    public func removePins(host: String, clientAddress: String?) throws -> Int {
        var binds = PostgresBindings()
        binds.append(host)
        var condition = "host = $1"
        if let clientAddress {
            binds.append(ClientIdentity.addressWithoutPort(clientAddress))
            condition += " AND client_address = $2"
        }
        return try session.query("DELETE FROM proxyapp_pins WHERE \(condition) RETURNING host", binds).count
    }

    @discardableResult
    public func removePin(_ key: PinnedDomain.Key) throws -> Bool {
        let counts = try applyPinChanges(saving: [], removing: [key])
        return counts.after != counts.before
    }

    @discardableResult
    public func removeAllPins() throws -> Int {
        try session.query("DELETE FROM proxyapp_pins RETURNING host").count
    }

    @discardableResult
    public func removePins(expiredBefore cutoff: Date) throws -> Int {
        var binds = PostgresBindings()
        binds.append(CaptureTime.milliseconds(cutoff))
        return try session.query("DELETE FROM proxyapp_pins WHERE last_seen <= $1 RETURNING host", binds).count
    }

    private static func pin(from row: PostgresRow) throws -> PinnedDomain {
        do {
            let (host, address, fingerprint, reason, evidence, alert, tlsVersion, firstSeen, lastSeen, count) = try row.decode(
                (String, String, String, String, String, String?, String?, Int64, Int64, Int).self)
            return PinnedDomain(
                host: host, reason: reason, evidence: evidence, firstSeen: CaptureTime.date(milliseconds: firstSeen),
                lastSeen: CaptureTime.date(milliseconds: lastSeen), count: count,
                client: address.isEmpty && fingerprint.isEmpty ? nil : ClientIdentity(address: address, fingerprint: fingerprint),
                alert: alert, tlsVersion: tlsVersion)
        } catch {
            throw SharedCaptureError.malformedRow("a pinned host's row is not what proxyapp writes")
        }
    }
}
