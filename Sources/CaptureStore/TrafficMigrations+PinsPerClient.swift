import GRDB

extension TrafficMigrations {
    /// v6: pins per client and host, with their evidence.
    ///
    /// `pinned_domains` is rebuilt (SQLite cannot change a primary key) with the key
    /// `(host, client_address, client_fingerprint)` and two more columns of evidence:
    /// - `client_address` (the IP without port) and `client_fingerprint` (the JA4-style
    ///   ClientHello fingerprint): the client the pin applies to; both `''` for a pin that
    ///   applies to every client. Rows from v5, which knew no clients, migrate as such
    ///   "any client" pins, keeping their times: they still expire `--pin-ttl` after their last
    ///   failure, and `proxyapp pins remove HOST` removes them as before.
    /// - `alert` (`unknown_ca`, …; NULL when the client closed without one or for migrated rows)
    ///   and `tls_version` (`TLS 1.3`; NULL when unknown).
    /// Dropping the old table drops v5's triggers: they are created again on the new one, and
    /// the change count is bumped so a running proxy re-reads the pins.
    static func pinPerClient(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE pinned_domains_v6 (
                host TEXT NOT NULL,
                client_address TEXT NOT NULL DEFAULT '',
                client_fingerprint TEXT NOT NULL DEFAULT '',
                reason TEXT NOT NULL,
                evidence TEXT NOT NULL,
                alert TEXT,
                tls_version TEXT,
                first_seen INTEGER NOT NULL,
                last_seen INTEGER NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (host, client_address, client_fingerprint));
            INSERT INTO pinned_domains_v6 (host, reason, evidence, first_seen, last_seen, count)
                SELECT host, reason, evidence, first_seen, last_seen, count FROM pinned_domains;
            DROP TABLE pinned_domains;
            ALTER TABLE pinned_domains_v6 RENAME TO pinned_domains;
            CREATE TRIGGER pinned_domains_insert AFTER INSERT ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            CREATE TRIGGER pinned_domains_update AFTER UPDATE ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            CREATE TRIGGER pinned_domains_delete AFTER DELETE ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            UPDATE pin_changes SET version = version + 1;
            """)
    }
}
