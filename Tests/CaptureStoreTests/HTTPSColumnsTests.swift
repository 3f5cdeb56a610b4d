import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// The `v2-https` columns of `flows`: TLS details and the note, written by the C-API insert and
/// read back; and the upgrade of a database written before them.
final class HTTPSColumnsTests: XCTestCase {
    private static let fullTLS = TLSDetails(
        clientVersion: "TLSv1.3", clientCipher: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1", sni: "Bücher.Example",
        upstreamVersion: "TLSv1.2", upstreamCipher: "ECDHE-RSA-AES128-GCM-SHA256",
        upstreamSubject: "CN=bücher.example,O=\"Quote, Inc\"", upstreamIssuer: "CN=R11,O=Let's Encrypt,C=US",
        upstreamNotAfter: Date(timeIntervalSince1970: 1_780_000_000.123))

    /// Every TLS field and the note survive a write and a read; a flow without them stays
    /// without them in the same batch.
    func testTLSAndNoteRoundTrip() throws {
        let repository = try makeRepository()
        var https = Samples.fullHTTP
        https.tls = Self.fullTLS
        https.note = "upstream certificate expires in 3 days ☃"
        var tunnel = Samples.tunnel
        tunnel.note = "pinned: client rejected the certificate (unknown_ca alert)"
        let plain = Samples.flow(1)
        let ids = try repository.insert([https, tunnel, plain])

        https.id = ids[0]
        tunnel.id = ids[1]
        XCTAssertEqual(try repository.flow(id: ids[0]), https)
        XCTAssertEqual(try repository.flow(id: ids[1]), tunnel)
        let storedPlain = try XCTUnwrap(try repository.flow(id: ids[2]))
        XCTAssertNil(storedPlain.tls)
        XCTAssertNil(storedPlain.note)
        XCTAssertEqual(try repository.latestFlows(limit: 3).map(\.tls), [nil, nil, Self.fullTLS])
    }

    /// Partly filled details come back as they were, field by field (one leg only, or an empty
    /// string that must not turn into nil).
    func testPartialTLSDetailsRoundTrip() throws {
        let repository = try makeRepository()
        let partials = [
            TLSDetails(clientVersion: "TLSv1.2", clientCipher: "ECDHE-ECDSA-AES256-GCM-SHA384"),
            TLSDetails(sni: ""),
            TLSDetails(upstreamNotAfter: Date(timeIntervalSince1970: 0)),
            TLSDetails(alpn: "h2", upstreamIssuer: "CN=Issuer"),
        ]
        let flows = partials.map { details -> Flow in
            var flow = Samples.flow(1)
            flow.tls = details
            return flow
        }
        let ids = try repository.insert(flows)
        for (id, details) in zip(ids, partials) {
            XCTAssertEqual(try repository.flow(id: id)?.tls, details)
        }
    }

    /// Documented: a `TLSDetails` with no field set is stored as all NULL, like no details, and
    /// reads back as nil.
    func testEmptyTLSDetailsReadBackAsNil() throws {
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        flow.tls = TLSDetails()
        let id = try XCTUnwrap(try repository.insert([flow]).first)
        XCTAssertNil(try repository.flow(id: id)?.tls)
    }

    /// A flow without TLS leaves every new column NULL in the file (what `sqlite3` users see).
    func testPlainFlowStoresNULLs() throws {
        let repository = try makeRepository()
        let id = try XCTUnwrap(try repository.insert([Samples.flow(1)]).first)
        let nonNull = try repository.database.pool.read { db in
            try Int.fetchOne(db, sql: """
                SELECT count(*) FROM flows WHERE id = ? AND (note IS NOT NULL OR tls_client_version IS NOT NULL
                  OR tls_client_cipher IS NOT NULL OR tls_alpn IS NOT NULL OR tls_sni IS NOT NULL
                  OR tls_upstream_version IS NOT NULL OR tls_upstream_cipher IS NOT NULL
                  OR tls_upstream_subject IS NOT NULL OR tls_upstream_issuer IS NOT NULL
                  OR tls_upstream_not_after IS NOT NULL)
                """, arguments: [id])
        }
        XCTAssertEqual(nonNull, 0)
    }

    /// A capture written before v2 is upgraded when the proxy opens it: its flows read back
    /// without TLS or note, new flows store both, and the pin table exists.
    func testVersion1DatabaseIsUpgraded() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        try writeVersion1Capture(at: path)

        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let old = try XCTUnwrap(try repository.latestFlows(limit: 1).first)
        XCTAssertEqual(old.url, "http://old.test/before")
        XCTAssertNil(old.tls)
        XCTAssertNil(old.note)
        XCTAssertEqual(try repository.pinnedDomains(), [])

        var new = Samples.flow(2)
        new.tls = Self.fullTLS
        let id = try XCTUnwrap(try repository.insert([new]).first)
        XCTAssertEqual(try repository.flow(id: id)?.tls, Self.fullTLS)
    }

    /// A reader (read-only, never migrates) of a capture written before v2 is told to let the
    /// proxy upgrade it, rather than "not a capture database".
    func testReadOnlyOpenOfVersion1DatabaseAsksForTheUpgrade() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        try writeVersion1Capture(at: path)
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .schemaTooOld(path: path))
            XCTAssertTrue("\(error)".contains("proxyapp run"), "\(error)")
        }
        _ = try TrafficDatabase(path: path)
        XCTAssertNoThrow(try TrafficDatabase.openReadOnly(path: path))
    }

    /// A database migrated up to v1 only, holding one flow, as the previous release left it.
    private func writeVersion1Capture(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try TrafficMigrations.migrator.migrate(queue, upTo: "v1-flows")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO flows (kind, client_address, started_at, method, scheme, host, port, path, http_version)
                VALUES ('http', '127.0.0.1:5000', 1763760000000, 'GET', 'http', 'old.test', 80, '/before', 'HTTP/1.1')
                """)
        }
    }
}
