import GRDB

/// The capture database schema, as a list of versioned migrations.
///
/// Shipped migrations never change: a schema change is a new migration appended at the end.
/// Tables and columns are named by string here, never through app types, so renaming a Swift
/// property can never rewrite history.
enum TrafficMigrations {
    /// Every migration, in order.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-flows", migrate: createFlows)
        migrator.registerMigration("v2-https", migrate: addHTTPS)
        migrator.registerMigration("v3-server-address", migrate: addServerAddress)
        migrator.registerMigration("v4-applied-rules", migrate: addAppliedRules)
        migrator.registerMigration("v5-pin-changes", migrate: addPinChangeCounter)
        migrator.registerMigration("v6-pins-per-client", migrate: pinPerClient)
        migrator.registerMigration("v7-forwarded-messages", migrate: addForwardedMessages)
        migrator.registerMigration("v8-http2-details", migrate: addHTTP2Details)
        migrator.registerMigration("v9-websocket-messages", migrate: addWebSocketMessages)
        migrator.registerMigration("v10-replay-of", migrate: addReplayOf)
        migrator.registerMigration("v11-hold-time", migrate: addHoldTime)
        migrator.registerMigration("v12-body-files", migrate: addBodyFiles)
        migrator.registerMigration("v13-marked-index", migrate: addMarkedIndex)
        migrator.registerMigration("v14-full-text", migrate: addFullTextIndex)
        return migrator
    }()

    /// v1: one row per captured exchange.
    ///
    /// Conventions:
    /// - Timestamps (`started_at`, `finished_at`) are INTEGER milliseconds since the Unix epoch
    ///   (UTC). Millisecond precision is what the CLI, the TUI and HAR show; integers sort and
    ///   compare exactly.
    /// - Timing phases are REAL milliseconds, `-1` for a phase that did not happen (HAR style).
    /// - Header lists are TEXT holding a JSON array of `[name, value]` pairs, in wire order with
    ///   duplicates kept: `[["Host","a.test"],["Accept","*/*"]]`.
    /// - Bodies are BLOBs holding the captured prefix (raw, still content-encoded), beside the full
    ///   size that crossed the proxy and a truncated flag. An empty capture is NULL: GRDB binds an
    ///   empty `Data` as NULL anyway (its buffer has no base address).
    /// - Column order matters for speed: small columns first, header JSON and body BLOBs last, so
    ///   listing queries never walk a body's overflow pages to reach a later column.
    private static func createFlows(_ db: Database) throws {
        try db.create(table: "flows") { t in
            t.autoIncrementedPrimaryKey("id")  // ids never reused, even after deletes
            t.column("kind", .text).notNull()  // "http" | "tunnel"
            t.column("client_address", .text).notNull()
            t.column("started_at", .integer).notNull()  // ms since epoch
            t.column("finished_at", .integer)  // ms since epoch; NULL while unfinished
            t.column("dns_ms", .double).notNull().defaults(to: -1)
            t.column("connect_ms", .double).notNull().defaults(to: -1)
            t.column("tls_ms", .double).notNull().defaults(to: -1)
            t.column("send_ms", .double).notNull().defaults(to: -1)
            t.column("wait_ms", .double).notNull().defaults(to: -1)
            t.column("receive_ms", .double).notNull().defaults(to: -1)
            t.column("method", .text).notNull()
            t.column("scheme", .text).notNull()
            t.column("host", .text).notNull()
            t.column("port", .integer).notNull()
            t.column("path", .text).notNull()  // path and query; empty for tunnels
            t.column("http_version", .text).notNull()
            t.column("status", .integer)  // NULL when no response arrived
            t.column("reason", .text)
            t.column("error", .text)
            t.column("bytes_up", .integer).notNull().defaults(to: 0)
            t.column("bytes_down", .integer).notNull().defaults(to: 0)
            t.column("marked", .boolean).notNull().defaults(to: false)
            t.column("request_body_size", .integer).notNull().defaults(to: 0)
            t.column("request_body_truncated", .boolean).notNull().defaults(to: false)
            t.column("response_body_size", .integer).notNull().defaults(to: 0)
            t.column("response_body_truncated", .boolean).notNull().defaults(to: false)
            t.column("request_headers", .text).notNull().defaults(to: "[]")
            t.column("response_headers", .text).notNull().defaults(to: "[]")
            t.column("request_body", .blob)  // NULL when no byte was captured
            t.column("response_body", .blob)
        }
        try db.create(index: "flows_on_started_at", on: "flows", columns: ["started_at"])
        try db.create(index: "flows_on_host", on: "flows", columns: ["host"])
    }

    /// v2: what HTTPS interception adds — TLS details and a note per flow, and the pinned hosts.
    ///
    /// - The new `flows` columns are all nullable: plain HTTP flows and tunnels store NULL in
    ///   every `tls_*` column, and a flow without a note NULL in `note`. `tls_upstream_not_after`
    ///   is INTEGER milliseconds since the epoch, like every timestamp.
    /// - `ALTER TABLE` appends them at the end of the row, after the header JSON and the body
    ///   BLOBs, against v1's "small columns first" rule: reading one of them walks a large body's
    ///   overflow pages. Accepted: today they are only read with whole flows, bodies included,
    ///   and a listing query that skips bodies can leave them out too. Rebuilding the table to
    ///   reorder them would rewrite every captured body.
    /// - `pinned_domains`: one row per host the proxy stopped intercepting because its clients
    ///   refuse our certificates; `host` is lowercased, times are epoch milliseconds, `count`
    ///   is how many handshake failures were seen.
    private static func addHTTPS(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "note", .text)
            t.add(column: "tls_client_version", .text)
            t.add(column: "tls_client_cipher", .text)
            t.add(column: "tls_alpn", .text)
            t.add(column: "tls_sni", .text)
            t.add(column: "tls_upstream_version", .text)
            t.add(column: "tls_upstream_cipher", .text)
            t.add(column: "tls_upstream_subject", .text)
            t.add(column: "tls_upstream_issuer", .text)
            t.add(column: "tls_upstream_not_after", .integer)  // ms since epoch
        }
        try db.create(table: "pinned_domains") { t in
            t.primaryKey("host", .text)
            t.column("reason", .text).notNull()
            t.column("evidence", .text).notNull()
            t.column("first_seen", .integer).notNull()  // ms since epoch
            t.column("last_seen", .integer).notNull()  // ms since epoch
            t.column("count", .integer).notNull()
        }
    }

    /// v3: the origin's IP address as connected (`server_address`, TEXT, no port; NULL when no
    /// upstream connection was made or the flow was imported without one), for HAR's
    /// `serverIPAddress` and the detail view.
    private static func addServerAddress(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "server_address", .text)
        }
    }

    /// v4: the names of the rules that acted on the flow (`rules`, TEXT): a JSON array of strings
    /// in the order they acted, `["Block ads","staging"]`; NULL when no rule did (most flows), so
    /// the column costs nothing where rules are off.
    private static func addAppliedRules(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "rules", .text)
        }
    }

    /// v5: `pin_changes`, one row whose `version` every insert, update and delete on
    /// `pinned_domains` bumps (triggers, so any writer counts: the proxy, `proxyapp pins`, the
    /// sqlite3 shell). A running proxy reads this one number every few seconds and re-reads the
    /// pins only when it moved.
    private static func addPinChangeCounter(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE pin_changes (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
            INSERT INTO pin_changes (id, version) VALUES (1, 0);
            CREATE TRIGGER pinned_domains_insert AFTER INSERT ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            CREATE TRIGGER pinned_domains_update AFTER UPDATE ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            CREATE TRIGGER pinned_domains_delete AFTER DELETE ON pinned_domains
                BEGIN UPDATE pin_changes SET version = version + 1; END;
            """)
    }

    /// v7: a flow's origin side, only where a rule changed it (NULL otherwise, so other flows
    /// cost nothing): `forwarded_request` (TEXT, the request as forwarded to the origin) and
    /// `origin_response` (TEXT, the response as the origin sent it), each a header JSON array
    /// with pseudo-fields first (`ForwardedMessageJSON`), and their bodies when the rule changed
    /// them (`forwarded_request_body`, `origin_response_body`: BLOBs, raw and capped as the
    /// other bodies; NULL when the body was not changed or empty).
    private static func addForwardedMessages(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "forwarded_request", .text)
            t.add(column: "origin_response", .text)
            t.add(column: "forwarded_request_body", .blob)
            t.add(column: "origin_response_body", .blob)
        }
    }

    /// v8: the response's trailers (a header list, NULL when none) and the HTTP/2 stream id
    /// (NULL for HTTP/1).
    private static func addHTTP2Details(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "response_trailers", .text)
            t.add(column: "stream_id", .integer)
        }
    }

    /// v9: WebSocket messages, one row each, linked to the flow of their upgrade (the
    /// repository's deletes remove them with it: foreign keys are off, see `TrafficDatabase`),
    /// and a count on the flow for the list. `time` is epoch milliseconds like the flows';
    /// `direction` is `send` (client to server) or `receive`; `kind` is the opcode's name;
    /// `payload` the kept (decoded) bytes, NULL when none.
    private static func addWebSocketMessages(_ db: Database) throws {
        try db.create(table: "messages") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("flow_id", .integer).notNull()
            t.column("direction", .text).notNull()
            t.column("time", .integer).notNull()
            t.column("kind", .text).notNull()
            t.column("size", .integer).notNull()
            t.column("truncated", .boolean).notNull()
            t.column("compressed", .boolean).notNull()
            t.column("close_code", .integer)
            t.column("close_reason", .text)
            t.column("payload", .blob)
        }
        try db.create(index: "messages_by_flow", on: "messages", columns: ["flow_id", "id"])
        try db.alter(table: "flows") { t in
            t.add(column: "message_count", .integer).notNull().defaults(to: 0)
        }
    }

    /// v10: the flow a replayed one sent again (its id; NULL for traffic a client sent). No
    /// index: `~replay` reads it beside the other listing columns.
    private static func addReplayOf(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "replay_of", .integer)
        }
    }

    /// v11: how long the exchange waited at a breakpoint, in milliseconds (-1: never held), a
    /// timing phase beside the others.
    private static func addHoldTime(_ db: Database) throws {
        try db.alter(table: "flows") { t in
            t.add(column: "hold_ms", .double).notNull().defaults(to: -1)
        }
    }

    /// v12: bodies of 256 KiB and more live in files beside the database (`BodyFileStore`): a
    /// row names its file (the body's SHA-256 in hex) and leaves the BLOB column NULL. Partial
    /// indexes, so a row without a file costs nothing, answer "does another row still name this
    /// file?" when flows are deleted.
    private static func addBodyFiles(_ db: Database) throws {
        let columns = ["request_body_file", "response_body_file", "forwarded_request_body_file", "origin_response_body_file"]
        try db.alter(table: "flows") { t in
            for column in columns {
                t.add(column: column, .text)
            }
        }
        for column in columns {
            try db.execute(sql: "CREATE INDEX flows_on_\(column) ON flows(\(column)) WHERE \(column) IS NOT NULL")
        }
    }

    /// v13: a partial index of the marked flows, so retention (`RetentionPolicy.maxFlows`, which
    /// does not count them) counts them without reading the table; unmarked rows cost nothing.
    private static func addMarkedIndex(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX flows_marked ON flows(id) WHERE marked <> 0")
    }

    /// v14: the full-text index (`FullTextIndex`: its list of shards, each an FTS5 table made
    /// when due), filled with the flows already stored.
    private static func addFullTextIndex(_ db: Database) throws {
        try db.execute(sql: FullTextIndex.createShardsSQL)
        try FullTextIndex.indexExistingFlows(db)
    }
}
