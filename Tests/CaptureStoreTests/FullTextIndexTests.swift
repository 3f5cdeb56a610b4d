import BodyCodec
import CaptureTestSupport
import FlowFilter
import Foundation
import GRDB
import ProxyModel
import SeededRandom
import TestSupport
import XCTest

@testable import CaptureStore

/// The full-text index (`FullTextIndex`): filled with every stored flow, bounded per body,
/// emptied with its flows, built for older captures, and tokenized as Swift tokenizes.
final class FullTextIndexTests: XCTestCase {
    private func flow(_ index: Int, body: String = "", contentType: String? = "text/plain",
                      encoding: String? = nil) throws -> Flow {
        var flow = Samples.flow(index)
        var headers = [HeaderField]()
        if let contentType { headers.append(HeaderField(name: "Content-Type", value: contentType)) }
        var bytes = Array(body.utf8)
        if let encoding {
            headers.append(HeaderField(name: "Content-Encoding", value: encoding))
            bytes = try BodyEncoder.encode(bytes, contentEncoding: encoding)
        }
        flow.responseHeaders = headers
        flow.responseBody = CapturedBody(bytes: Data(bytes), size: Int64(bytes.count))
        return flow
    }

    private func ids(_ filter: String, _ repository: TrafficRepository) throws -> [Int64] {
        var ids: [Int64] = []
        try repository.forEachFlow(matching: FlowQuery(filter: try FlowFilter(parsing: filter))) { ids.append($0.id!) }
        return ids
    }

    /// The shards (FTS5 found each consistent), each as the number of its rows holding `word`
    /// (a contentless table cannot be counted otherwise).
    private func shardRows(_ repository: TrafficRepository, holding word: String = "common") throws -> [Int] {
        try repository.database.pool.write { db in
            try FullTextIndex.shards(db).map { shard in
                try db.execute(sql: "INSERT INTO \(shard.table)(\(shard.table)) VALUES ('integrity-check')")
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM \(shard.table) WHERE \(shard.table) MATCH ?",
                                        arguments: [word]) ?? -1
            }
        }
    }

    /// Text bodies are indexed decoded, up to 64 KiB; binary ones and undecodable ones not at all.
    func testBodiesAreIndexedAsTextWithinBounds() throws {
        let repository = try makeRepository()
        let long = String(repeating: "filler ", count: 9_400) + "beyondlimit"  // ~65.8 KB
        try repository.insert([
            try flow(1, body: "plain needle one"),
            try flow(2, body: "{\"key\":\"gzipneedle\"}", contentType: "application/json", encoding: "gzip"),
            try flow(3, body: "brneedle in html", contentType: "text/html", encoding: "br"),
            try flow(4, body: "binaryneedle", contentType: "image/png"),
            try flow(5, body: "sniffedneedle", contentType: nil),
            try flow(6, body: "nul\u{0}needle", contentType: nil),
            try flow(7, body: long),
        ])
        // A compression bomb (2 MiB of text in a few KB) costs the writer no more than 1 MiB of inflating.
        try repository.insert([try flow(9, body: String(repeating: "bombword ", count: 240_000), encoding: "gzip")])
        var broken = try flow(8, body: "corruptneedle")
        broken.responseHeaders.append(HeaderField(name: "Content-Encoding", value: "gzip"))  // not gzip at all
        try repository.insert([broken])

        XCTAssertEqual(try ids("~fts needle", repository), [1])
        XCTAssertEqual(try ids("~fts gzipneedle", repository), [2])
        XCTAssertEqual(try ids("~fts brneedle", repository), [3])
        XCTAssertEqual(try ids("~fts binaryneedle", repository), [])
        XCTAssertEqual(try ids("~fts sniffedneedle", repository), [5])
        XCTAssertEqual(try ids("~fts 'nul needle'", repository), [])
        XCTAssertEqual(try ids("~fts filler", repository), [7])
        XCTAssertEqual(try ids("~fts beyondlimit", repository), [], "only the first 64 KiB of a body")
        XCTAssertEqual(try ids("~fts corruptneedle", repository), [])
        XCTAssertEqual(try ids("~fts bombword", repository), [])
        XCTAssertEqual(try ids("~fts 'url:item 9'", repository), [8], "its URL and headers are indexed all the same")
        // The URL and the headers of every flow are there.
        XCTAssertEqual(try ids("~fts 'url:item 4'", repository), [4])
        XCTAssertEqual(try ids("~ftss 'png'", repository), [4])
    }

    /// Removed flows (by id, by retention, all of them) are never found again, though their rows
    /// stay until their shard goes; a later flow never inherits an old flow's words.
    func testRemovedFlowsAreNeverFound() throws {
        let repository = try makeRepository()
        try repository.insert(try (1...10).map { try flow($0, body: "word\($0) shared") })
        try repository.delete(ids: [2, 3])
        XCTAssertEqual(try ids("~fts word2 OR word3", repository), [])
        XCTAssertEqual(try repository.count(matching: FlowQuery(filter: try FlowFilter(parsing: "~fts shared"))), 8)
        _ = try repository.enforce(RetentionPolicy(maxFlows: 4))
        XCTAssertEqual(try ids("~fts shared", repository).count, try repository.count())
        let kept = try repository.count()
        XCTAssertEqual(try repository.deleteAllFlows(), kept)
        XCTAssertEqual(try shardRows(repository), [], "every shard dropped")
        try repository.insert([try flow(11, body: "after")])
        XCTAssertEqual(try ids("~fts after", repository), [11])
        XCTAssertEqual(try ids("~fts shared", repository), [])
        XCTAssertEqual(try shardRows(repository, holding: "after"), [1])
    }

    /// Flows fill shards of `shardSize`; a shard whose flows are all gone is dropped, one with a
    /// few left (marked flows retention keeps) has them indexed in the next and is dropped, and
    /// every search still finds exactly the flows there are.
    func testShardsComeAndGoWithTheirFlows() throws {
        let saved = FullTextIndex.shardSize
        FullTextIndex.shardSize = 10
        defer { FullTextIndex.shardSize = saved }
        let repository = try makeRepository()
        var flows = try (1...45).map { try flow($0, body: "common w\($0)") }
        for index in [3, 14] { flows[index - 1].marked = true }
        try repository.insert(flows)
        XCTAssertEqual(try shardRows(repository), [10, 10, 10, 10, 5])
        XCTAssertEqual(try ids("~fts common", repository).count, 45)

        // The oldest unmarked go (26 of them: down to 5 % under the limit). Shard 1 keeps only #3
        // (retireBelow is 1 here): retired into shard 2, which keeps #3 and #14 and stays.
        _ = try repository.enforce(RetentionPolicy(maxFlows: 20, keepMarked: true))
        let left = try repository.latestFlows(limit: 100).compactMap(\.id).sorted()
        XCTAssertTrue(left.contains(3) && left.contains(14))
        XCTAssertEqual(try ids("~fts common", repository), left)
        XCTAssertEqual(try ids("~fts 'w3 OR w14'", repository), [3, 14])
        XCTAssertEqual(try shardRows(repository, holding: "w3"), [1, 0, 0, 0])
        XCTAssertEqual(try repository.database.pool.read { db in try FullTextIndex.shards(db).map(\.number) }, [2, 3, 4, 5])
        XCTAssertEqual(try repository.database.pool.read { db in try FullTextIndex.shards(db).first?.firstID }, 1,
                       "the oldest shard left starts where the retired ones did")
        try repository.insert(try (46...60).map { try flow($0, body: "common late") })
        XCTAssertEqual(try ids("~fts late", repository), Array(46...60).map(Int64.init))
        XCTAssertEqual(try ids("~fts common", repository).count, left.count + 15)
    }

    /// Retention looks only at the shards up to the highest id it removed (counting what is left
    /// in every shard after each batch held the writer back at a capture's size limit); a shard
    /// emptied while it was the newest is retired by the next delete a user asks for, which
    /// looks at every shard.
    func testRetentionLooksOnlyWhereItRemovedAndADeleteEverywhere() throws {
        let saved = FullTextIndex.shardSize
        FullTextIndex.shardSize = 10
        defer { FullTextIndex.shardSize = saved }
        let repository = try makeRepository()
        let shardNumbers = { try repository.database.pool.read { db in try FullTextIndex.shards(db).map(\.number) } }
        let first = try repository.insert(try (1...30).map { try flow($0, body: "common w\($0)") })
        try repository.delete(ids: Array(first[20...]))  // shard 3 emptied, but it is the newest
        XCTAssertEqual(try shardNumbers(), [1, 2, 3])
        try repository.insert(try (31...35).map { try flow($0, body: "common w\($0)") })
        XCTAssertEqual(try shardRows(repository), [10, 10, 10, 5], "the emptied shard keeps its stale rows")

        // 25 flows are left; down to 20 takes the 5 oldest and 1 more (5 % of the limit).
        _ = try repository.enforce(RetentionPolicy(maxFlows: 20))
        XCTAssertEqual(try repository.latestFlows(limit: 100).compactMap(\.id).min(), first[6])
        XCTAssertEqual(try shardNumbers(), [1, 2, 3, 4], "retention removed from shard 1 only: 3 was not looked at")
        XCTAssertEqual(try ids("~fts common", repository).count, 19)

        try repository.delete(ids: [first[10]])
        XCTAssertEqual(try shardNumbers(), [1, 2, 4], "a delete looks at every shard: the empty one goes")
        XCTAssertEqual(try ids("~fts common", repository).count, 18)
        XCTAssertEqual(try ids("~fts w35", repository).count, 1)
    }

    /// A capture from before schema v14 is indexed when the proxy opens it, bodies in files too.
    func testAnOlderCaptureIsIndexedOnUpgrade() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        do {
            let repository = try directory.makeRepository()
            var large = try flow(2, body: "bigneedle " + String(repeating: "x", count: BodyFileStore.threshold))
            large.responseHeaders = [HeaderField(name: "Content-Type", value: "text/plain")]
            try repository.insert([try flow(1, body: "oldneedle"), large])
            // As schema v13 left it: no index, no record of v14.
            try repository.database.pool.write { db in
                try db.execute(sql: "DROP TABLE flows_fts_1; DROP TABLE flows_fts_shards")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v14-full-text'")
            }
        }
        XCTAssertEqual(TrafficDatabase.flowsAwaitingSearchIndex(path: path), 2)
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        XCTAssertEqual(TrafficDatabase.flowsAwaitingSearchIndex(path: path), 0)
        XCTAssertEqual(TrafficDatabase.flowsAwaitingSearchIndex(path: directory.file("none.sqlite")), 0)
        XCTAssertEqual(try ids("~fts oldneedle", repository), [1])
        XCTAssertEqual(try ids("~fts bigneedle", repository), [2])
        XCTAssertEqual(try shardRows(repository, holding: "item"), [2])
    }

    /// A spooled body (a live download of 256 KiB and more) is indexed from its spool's start.
    func testASpooledBodyIsIndexed() throws {
        let directory = try makeTemporaryDirectory()
        let repository = try directory.makeRepository()
        let text = Data(("spoolneedle " + String(repeating: "y ", count: CapturedBody.blockSize)).utf8)
        var body = CapturedBody()
        body.size = Int64(text.count)
        text.withUnsafeBytes { body.append($0) }
        body.startSpooling(repository.database.bodyFiles.makeSpool())
        body.finishSpooling()
        var spooled = Samples.flow(1)
        spooled.responseHeaders = [HeaderField(name: "Content-Type", value: "text/plain")]
        spooled.responseBody = body
        try repository.insert([spooled])
        XCTAssertEqual(try ids("~fts spoolneedle", repository), [1])
        XCTAssertEqual(try repository.latestFlows(limit: 1).first?.responseBody.size, Int64(text.count))
    }

    /// The newest matches first, with excerpts that mark the words found; a filter narrows them.
    func testLatestHitsComeWithExcerpts() throws {
        let repository = try makeRepository()
        try repository.insert(try (1...30).map { try flow($0, body: "status \($0 % 3 == 0 ? "invalid token" : "ok")") })
        let search = try FullTextQuery(parsing: #""invalid token""#)
        let query = FlowQuery(filter: try FlowFilter(parsing: #"~fts '"invalid token"'"#))
        let hits = try repository.latestFullTextHits(search, matching: query, limit: 4)
        XCTAssertEqual(hits.map(\.flow.id), [30, 27, 24, 21])
        let excerpt = try XCTUnwrap(hits.first?.excerpts.first)
        XCTAssertEqual(excerpt.field, .responseBody)
        XCTAssertEqual(excerpt.text, "status \u{E000}invalid\u{E001} \u{E000}token\u{E001}")
        XCTAssertEqual(hits.first?.flow.responseBody.bytes, Data(), "listed without bodies")

        let narrowed = FlowQuery(filter: try FlowFilter(parsing: #"~fts '"invalid token"' & ~u /item/1"#))
        XCTAssertEqual(try repository.latestFullTextHits(search, matching: narrowed, limit: 10).map(\.flow.id), [18, 15, 12])
        XCTAssertEqual(try repository.count(matching: narrowed), 3)
    }

    /// Words reach FTS5 only quoted: what would be FTS5 syntax, or SQL, is searched as text.
    func testNoSearchReachesFTS5AsSyntax() throws {
        let repository = try makeRepository()
        try repository.insert([try flow(1, body: "a b c"), try flow(2, body: "x NEAR y")])
        for text in [#"~fts 'a" OR "b'"#, "~fts 'NEAR/2'", "~fts '^a'", "~fts 'a+b'", "~fts \"drop'; table--\"",
                     "~fts '-url:x'", "~fts 'c*d'", "~fts 'col0:a'"] {
            XCTAssertNoThrow(try ids(text, repository), text)
        }
        XCTAssertEqual(try ids("~fts 'a+b'", repository), [1])
        XCTAssertEqual(try ids("~fts 'NEAR y'", repository), [2])
        XCTAssertEqual(try repository.count(), 2)
    }

    /// `FullTextTokenizer` splits and folds as SQLite's `unicode61` does, over random text mixing
    /// ASCII, punctuation, accents, combining marks and other scripts.
    func testTheSwiftTokenizerAgreesWithSQLite() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts5(a, tokenize = 'unicode61 remove_diacritics 2')")
            try db.execute(sql: "CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        }
        let alphabet = Array("aZ09_-.:/ \t\n\"'@#%&*+=<>|~^`€$©°½²ⅠßẞİıÉéèñÑçÇøØåÅæœﬁ日本語한국어Ωωσς\u{301}\u{308}\u{E000}\u{A0}\u{2028}Кирил")
        var random = SeededRandom(seed: 7)
        for round in 0..<300 {
            let text = String((0..<Int.random(in: 1...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let sqlite = try queue.write { db -> [String] in
                try db.execute(sql: "DELETE FROM t")
                try db.execute(sql: "INSERT INTO t(a) VALUES (?)", arguments: [text])
                return try String.fetchAll(db, sql: "SELECT term FROM v ORDER BY offset")
            }
            XCTAssertEqual(FullTextTokenizer.words(text), sqlite, "round \(round): \(text.debugDescription)")
        }
    }
}
