import Foundation
import PostgresNIO

/// The shared capture's schema, as numbered migrations applied in order, once, by whichever
/// proxy or reader comes first.
///
/// Tables are prefixed `proxyapp_` so the capture can live in a database that holds other
/// things. Migrations run in one transaction under an advisory lock, so four proxies starting
/// at once apply each exactly once; a database whose version is newer than this build's is
/// refused rather than written with the wrong columns. Shipped migrations never change.
enum PostgresSchema {
    /// The key of the advisory lock migrations run under (any constant of our own).
    static let migrationLock: Int64 = 0x7072_6F78_7961_7070  // "proxyapp"

    /// Every migration, in order, as its statements (the extended query protocol takes one at
    /// a time); the schema version is their count.
    static let migrations: [[String]] = [
        // 1: flows, as in the SQLite capture (v1–v12 folded together), tagged with the proxy that
        // captured them; bodies inline; ids from one sequence shared by every proxy.
        ["""
        CREATE TABLE proxyapp_flows (
          id bigserial PRIMARY KEY,
          proxy text NOT NULL,
          kind text NOT NULL,
          client_address text NOT NULL,
          started_at bigint NOT NULL,
          finished_at bigint,
          dns_ms double precision NOT NULL DEFAULT -1,
          connect_ms double precision NOT NULL DEFAULT -1,
          tls_ms double precision NOT NULL DEFAULT -1,
          send_ms double precision NOT NULL DEFAULT -1,
          wait_ms double precision NOT NULL DEFAULT -1,
          receive_ms double precision NOT NULL DEFAULT -1,
          hold_ms double precision NOT NULL DEFAULT -1,
          method text NOT NULL,
          scheme text NOT NULL,
          host text NOT NULL,
          port integer NOT NULL,
          path text NOT NULL,
          http_version text NOT NULL,
          status integer,
          reason text,
          error text,
          bytes_up bigint NOT NULL DEFAULT 0,
          bytes_down bigint NOT NULL DEFAULT 0,
          marked boolean NOT NULL DEFAULT false,
          request_body_size bigint NOT NULL DEFAULT 0,
          request_body_truncated boolean NOT NULL DEFAULT false,
          response_body_size bigint NOT NULL DEFAULT 0,
          response_body_truncated boolean NOT NULL DEFAULT false,
          request_headers text NOT NULL DEFAULT '[]',
          response_headers text NOT NULL DEFAULT '[]',
          note text,
          tls_client_version text, tls_client_cipher text, tls_alpn text, tls_sni text,
          tls_upstream_version text, tls_upstream_cipher text, tls_upstream_subject text,
          tls_upstream_issuer text, tls_upstream_not_after bigint,
          server_address text,
          rules text,
          forwarded_request text,
          origin_response text,
          response_trailers text,
          stream_id integer,
          message_count integer NOT NULL DEFAULT 0,
          replay_of bigint,
          request_body bytea,
          response_body bytea,
          forwarded_request_body bytea,
          origin_response_body bytea
        )
        """,
        "CREATE INDEX proxyapp_flows_on_started_at ON proxyapp_flows (started_at)",
        "CREATE INDEX proxyapp_flows_on_host ON proxyapp_flows (host)",
        "CREATE INDEX proxyapp_flows_on_proxy ON proxyapp_flows (proxy, id)",
        """
        CREATE TABLE proxyapp_messages (
          id bigserial PRIMARY KEY,
          flow_id bigint NOT NULL REFERENCES proxyapp_flows (id) ON DELETE CASCADE,
          direction text NOT NULL,
          time bigint NOT NULL,
          kind text NOT NULL,
          size bigint NOT NULL,
          truncated boolean NOT NULL,
          compressed boolean NOT NULL,
          close_code integer,
          close_reason text,
          payload bytea
        )
        """,
        "CREATE INDEX proxyapp_messages_by_flow ON proxyapp_messages (flow_id, id)"],
        // 2: pinned hosts, shared by every proxy, as the SQLite capture's `pinned_domains` (an
        // "any client" pin has '' for both client columns), with a change count every insert,
        // update and delete bumps, so a proxy re-reads the pins only when they changed.
        ["""
        CREATE TABLE proxyapp_pins (
          host text NOT NULL,
          client_address text NOT NULL DEFAULT '',
          client_fingerprint text NOT NULL DEFAULT '',
          reason text NOT NULL,
          evidence text NOT NULL,
          alert text,
          tls_version text,
          first_seen bigint NOT NULL,
          last_seen bigint NOT NULL,
          count integer NOT NULL,
          PRIMARY KEY (host, client_address, client_fingerprint)
        )
        """,
         "CREATE TABLE proxyapp_pin_changes (id integer PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)",
         "INSERT INTO proxyapp_pin_changes (id, version) VALUES (1, 0)",
         """
         CREATE FUNCTION proxyapp_count_pin_change() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           UPDATE proxyapp_pin_changes SET version = version + 1 WHERE id = 1;
           RETURN NULL;
         END
         $$
         """,
         """
         CREATE TRIGGER proxyapp_pins_changed AFTER INSERT OR UPDATE OR DELETE ON proxyapp_pins
         FOR EACH ROW EXECUTE FUNCTION proxyapp_count_pin_change()
         """],
    ]

    /// Applies what is missing; throws `SharedCaptureError.newerSchema` for a database written
    /// by a newer proxyapp.
    static func migrate(_ session: PostgresSession) throws {
        try session.transaction {
            var binds = PostgresBindings()
            binds.append(migrationLock)
            try session.query("SELECT pg_advisory_xact_lock($1)", binds)
            try session.query("CREATE TABLE IF NOT EXISTS proxyapp_schema (version integer NOT NULL)")
            let rows = try session.query("SELECT max(version) FROM proxyapp_schema")
            let current = try rows.first.map { try $0.decode(Int?.self) ?? 0 } ?? 0
            guard current <= migrations.count else {
                throw SharedCaptureError.newerSchema(found: current, known: migrations.count)
            }
            for version in current..<migrations.count {
                for statement in migrations[version] { try session.query(statement) }
                var versionBind = PostgresBindings()
                versionBind.append(version + 1)
                try session.query("INSERT INTO proxyapp_schema (version) VALUES ($1)", versionBind)
            }
        }
    }
}
