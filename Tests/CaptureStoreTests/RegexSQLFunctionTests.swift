import CaptureTestSupport
import FlowFilter
import Foundation
import GRDB
import ProxyModel
import XCTest

@testable import CaptureStore

/// The SQL regex functions run RE2: the patterns that stall a backtracking engine, in queries
/// over a capture holding ~100 KB hostile values, answer at once and right. A regression would
/// hang these tests.
final class RegexSQLFunctionTests: XCTestCase {
    private let run = String(repeating: "a", count: 100_000)
    private let xs = String(repeating: "x", count: 100_000)

    /// `~d`, `~m` and `~rule` are answered by SQL alone (`proxyapp_regexp`, `proxyapp_rules_regexp`).
    func testHostileValuesThroughFilterQueries() throws {
        let repository = try makeRepository()
        let hostile = Flow(kind: .http, method: "GET" + xs, scheme: "http", host: run + "b.test", port: 80, path: "/",
                           status: 200, appliedRules: ["ok", run + "b"])
        let plain = Flow(kind: .http, method: "GET", scheme: "http", host: String(run.prefix(10)), port: 80, path: "/",
                         status: 200, appliedRules: [String(run.prefix(10))])
        let ids = try repository.insert([hostile, plain])
        func matching(_ text: String) throws -> [Int64] {
            let query = FlowQuery(filter: try FlowFilter(parsing: text))
            XCTAssertTrue(query.isAnsweredBySQL, "\(text) must exercise the SQL function")
            var found: [Int64] = []
            try repository.forEachFlow(matching: query) { found.append($0.id!) }
            return found
        }
        XCTAssertEqual(try matching(#"~d "^(a+)+$""#), [ids[1]])
        XCTAssertEqual(try matching(#"~d "^(a+)+b\.test$""#), [ids[0]])
        XCTAssertEqual(try matching(#"~m "(x+x+)+y""#), [])
        XCTAssertEqual(try matching(#"~m "^get(x+x+)+$""#), [ids[0]])
        XCTAssertEqual(try matching(#"~rule "^(a+)+$""#), [ids[1]])
        XCTAssertEqual(try matching(#"~rule "^(\w+\s?)*!$""#), [])
        XCTAssertEqual(try matching(#"!~d "(a+)+$" & ~m "(x+x+)+$""#), [ids[0]])
    }

    /// The functions called directly on hostile text; a pattern RE2 refuses is a SQL error in words.
    func testFunctionsDirectly() throws {
        let repository = try makeRepository()
        let answers = try repository.database.pool.read { db in
            try Int.fetchAll(db, sql: """
                SELECT proxyapp_regexp('(a+)+$', ?) UNION ALL
                SELECT proxyapp_regexp('(x+x+)+y', ?) UNION ALL
                SELECT proxyapp_rules_regexp('(a+)+$', ?)
                """, arguments: [run + "b", xs, "[\"\(run)b\", \"\(run)\"]"])
        }
        XCTAssertEqual(answers, [0, 0, 1])
        XCTAssertThrowsError(try repository.database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT proxyapp_regexp('(a)\\1', 'aa')")
        }) { error in
            let message = (error as? DatabaseError)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("proxyapp_regexp: bad regex (a)\\1: backreferences like \\1 are not supported"),
                          message)
        }
    }
}
