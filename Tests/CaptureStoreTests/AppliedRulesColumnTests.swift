import CaptureTestSupport
import FlowFilter
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// The `v4-applied-rules` column: the names of the rules that acted on a flow survive a write and
/// a read in order, however awkward; no rules is NULL in the file; a value the store did not write
/// reads as no rules; and a capture written before v4 is upgraded without losing its flows.
final class AppliedRulesColumnTests: XCTestCase {
    private static let awkwardNames = [
        "Block ads", #"say "hi""#, #"back\slash \\ two"#, "a, b, c", "[not, an array]", "bücher ☃ 日本語 🎉",
        "tab\tnl\ncr\r nul\u{0} bell\u{7} unit\u{1F} del\u{7F} \u{2028}", "", "Block ads",
    ]

    func testAppliedRulesRoundTrip() throws {
        let repository = try makeRepository()
        var awkward = Samples.fullHTTP
        awkward.appliedRules = Self.awkwardNames
        var one = Samples.tunnel
        one.appliedRules = ["ssl_proxying: *.bank.test"]
        let none = Samples.flow(3)
        let ids = try repository.insert([awkward, one, none])
        awkward.id = ids[0]
        one.id = ids[1]

        XCTAssertEqual(try repository.flow(id: ids[0]), awkward)
        XCTAssertEqual(try repository.flow(id: ids[1]), one)
        XCTAssertEqual(try repository.flow(id: ids[2])?.appliedRules, [])
        XCTAssertEqual(try repository.listedFlows(ids: ids).map(\.appliedRules),
                       [Self.awkwardNames, ["ssl_proxying: *.bank.test"], []], "list rows read the column too")
        XCTAssertEqual(try repository.latestFlows(limit: 3).map(\.appliedRules).reversed(),
                       [Self.awkwardNames, ["ssl_proxying: *.bank.test"], []])
    }

    /// The file holds NULL for no rules and a plain JSON array of strings otherwise (what `sqlite3`
    /// users see), escaped like the header JSON.
    func testStoredValues() throws {
        let repository = try makeRepository()
        var two = Samples.flow(1)
        two.appliedRules = ["Block ads", "staging"]
        var escaped = Samples.flow(2)
        escaped.appliedRules = ["q\"b\\c\u{1}\n", "é"]
        let ids = try repository.insert([two, Samples.flow(3), escaped])
        let stored = try repository.database.pool.read { db in
            try ids.map { try String.fetchOne(db, sql: "SELECT rules FROM flows WHERE id = ?", arguments: [$0]) }
        }
        XCTAssertEqual(stored, [#"["Block ads","staging"]"#, nil, #"["q\"b\\c\u0001\n","é"]"#])
        XCTAssertEqual(AppliedRulesJSON.encode([]), nil)
    }

    /// Values written by hand read as what they say when they are an array of strings (spaces and
    /// any JSON escape allowed) and as no rules otherwise; `~rule` agrees in SQL and in Swift.
    func testHandWrittenValues() throws {
        let repository = try makeRepository()
        let cases: [(DatabaseValue, [String])] = [
            (#" [ "a" , "b\/c" , "\u00e9\ud83c\udf89" ] "#.databaseValue, ["a", "b/c", "é🎉"]),
            ("[]".databaseValue, []),
            ("".databaseValue, []),
            ("not json".databaseValue, []),
            (#"["unclosed"#.databaseValue, []),
            (#"["a", 1]"#.databaseValue, []),
            (#"{"name": "a"}"#.databaseValue, []),
            (#""a""#.databaseValue, []),
            (42.databaseValue, []),
            (Data([0xFF, 0x00]).databaseValue, []),
            (DatabaseValue.null, []),
        ]
        let ids = try repository.insert(cases.map { _ in Samples.flow(1) })
        try repository.database.pool.write { db in
            for (id, (value, _)) in zip(ids, cases) {
                try db.execute(sql: "UPDATE flows SET rules = ? WHERE id = ?", arguments: [value, id])
            }
        }
        for (id, (value, expected)) in zip(ids, cases) {
            XCTAssertEqual(try repository.flow(id: id)?.appliedRules, expected, "\(value)")
        }
        for text in ["~rule .", "~rule ^a$", "!~rule É", "~rule ''"] {
            let query = FlowQuery(filter: try FlowFilter(parsing: text))
            let swift = try repository.listedFlows(ids: ids).filter { query.filter!.matches($0) }.compactMap(\.id)
            XCTAssertEqual(try repository.flowIDsSelectedBySQL(query), swift, text)
        }
        XCTAssertEqual(try repository.flowIDsSelectedBySQL(FlowQuery(filter: try FlowFilter(parsing: "~rule ."))),
                       [ids[0]])
    }

    /// A capture written before v4 is upgraded when the proxy opens it: its flows keep what they
    /// had and read back without rules, new flows store theirs, even on the first read after the
    /// upgrade; a reader is asked to wait for it.
    func testVersion3DatabaseIsUpgraded() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        let queue = try DatabaseQueue(path: path)
        try TrafficMigrations.migrator.migrate(queue, upTo: "v3-server-address")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO flows (kind, client_address, started_at, method, scheme, host, port, path, http_version,
                                   status, note, server_address)
                VALUES ('http', '127.0.0.1:5000', 1763760000000, 'GET', 'http', 'old.test', 80, '/before', 'HTTP/1.1',
                        200, 'from v3', '192.0.2.1')
                """)
        }
        try queue.close()
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .schemaTooOld(path: path))
        }

        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        var new = Samples.flow(2)
        new.appliedRules = ["Map local: /api"]
        try repository.insert([new])
        // The first read after the upgrade: no reader may still see the old schema.
        let flows = try repository.latestFlows(limit: 2)
        XCTAssertEqual(flows.map(\.appliedRules), [["Map local: /api"], []])
        let old = try XCTUnwrap(flows.last)
        XCTAssertEqual(old.url, "http://old.test/before")
        XCTAssertEqual(old.status, 200)
        XCTAssertEqual(old.note, "from v3")
        XCTAssertEqual(old.serverAddress, "192.0.2.1")
        XCTAssertNoThrow(try TrafficDatabase.openReadOnly(path: path))
    }
}
