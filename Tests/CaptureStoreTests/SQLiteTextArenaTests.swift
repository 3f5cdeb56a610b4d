import CSQLite
import GRDB
import XCTest

@testable import CaptureStore

/// Text bound without a copy (`SQLiteTextArena`): what SQLite reads is each string as given,
/// empty stays empty (not NULL), nil is NULL, and a row reusing the buffer sees none of the
/// previous row's bytes.
final class SQLiteTextArenaTests: XCTestCase {
    /// Binds `texts` to `SELECT ?1, ?2, …` and returns each column as SQLite read it.
    private func roundTrip(_ texts: [String?], arena: SQLiteTextArena, on queue: DatabaseQueue) throws -> [String?] {
        try select(columns: texts.count, arena: arena, on: queue) { statement in
            for (index, text) in texts.enumerated() {
                arena.add(text, at: Int32(index + 1), of: statement)
            }
        }
    }

    /// Runs `SELECT ?1 … ?columns` with what `add` gave `arena` and returns each column as
    /// SQLite read it.
    private func select(columns: Int, arena: SQLiteTextArena, on queue: DatabaseQueue,
                        adding add: (OpaquePointer) -> Void) throws -> [String?] {
        try queue.inDatabase { db in
            let connection = try XCTUnwrap(db.sqliteConnection)
            let sql = "SELECT " + (0..<columns).map { "?\($0 + 1)" }.joined(separator: ", ")
            let statement = try SQLiteBinding.prepare(sql, on: connection)
            defer { sqlite3_finalize(statement) }
            arena.reset()
            add(statement)
            return arena.run(binding: statement) { () -> [String?] in
                XCTAssertEqual(sqlite3_step(statement), SQLITE_ROW)
                let row = (0..<columns).map { index -> String? in
                    let column = Int32(index)
                    guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
                    XCTAssertEqual(sqlite3_column_type(statement, column), SQLITE_TEXT)
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard count > 0, let bytes = sqlite3_column_text(statement, column) else { return "" }
                    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
                }
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
                return row
            }
        }
    }

    func testEachTextReadsBackAsGiven() throws {
        let queue = try DatabaseQueue()
        let arena = SQLiteTextArena()
        let long = String(repeating: "a longer value, café 😀 ", count: 3_000)
        let texts: [String?] = ["GET", "", nil, "Ünïcödé 😀", long, "x", "", "a\u{0}b"]
        XCTAssertEqual(try roundTrip(texts, arena: arena, on: queue), texts)
        let all: [String?] = [nil, nil]
        XCTAssertEqual(try roundTrip(all, arena: arena, on: queue), all, "no text at all: nothing to bind from")
        let empties: [String?] = ["", ""]
        XCTAssertEqual(try roundTrip(empties, arena: arena, on: queue), empties)
    }

    /// Text a closure writes into the buffer (the row's header JSON) binds like a string beside
    /// it; writing nothing binds an empty text, not NULL.
    func testTextWrittenIntoTheBufferReadsBackBesideStrings() throws {
        let arena = SQLiteTextArena()
        let row = try select(columns: 4, arena: arena, on: try DatabaseQueue()) { statement in
            arena.add("first", at: 1, of: statement)
            arena.add(at: 2, of: statement) { $0.append(contentsOf: Array("[[\"Host\",\"é\"]]".utf8)) }
            arena.add(at: 3, of: statement) { _ in }
            arena.add(at: 4, of: statement) { $0.append(contentsOf: Array("last".utf8)) }
        }
        XCTAssertEqual(row, ["first", "[[\"Host\",\"é\"]]", "", "last"])
    }

    func testAReusedArenaCarriesNothingOver() throws {
        let queue = try DatabaseQueue()
        let arena = SQLiteTextArena()
        XCTAssertEqual(try roundTrip([String(repeating: "z", count: 10_000), "first"], arena: arena, on: queue),
                       [String(repeating: "z", count: 10_000), "first"])
        XCTAssertEqual(try roundTrip(["b", "second"], arena: arena, on: queue), ["b", "second"])
        XCTAssertEqual(try roundTrip(["", nil], arena: arena, on: queue), ["", nil])
    }
}
