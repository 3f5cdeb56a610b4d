import CaptureTestSupport
import FlowFilter
import Foundation
import PostgresNIO
import ProxyAppUI
import ProxyModel
import TerminalUI
import XCTest

@testable import CaptureStore
@testable import SharedCapture

/// The shared capture as the TUI and `export` read it (`PostgresFlowStore`): filters in SQL and
/// Swift agree, the tail misses no flow while proxies write at once, and edits reach the store.
final class PostgresFlowStoreTests: PostgresTestCase {
    /// A store on another session of `session`'s database, as another process reads it.
    private func store(_ session: PostgresSession, rowsPerPage: Int = 200) -> PostgresFlowStore {
        PostgresFlowStore(session: otherSession(session), rowsPerPage: rowsPerPage)
    }

    /// The corpus written through the capture writer, read back whole (bodies and messages).
    private func storedCorpus(_ session: PostgresSession) throws -> (PostgresFlowStore, [Flow]) {
        let writer = makeWriter(session)
        for flow in FilterCorpus.flows { writer.record(flow) }
        flush(writer)
        let store = store(session)
        var stored: [Flow] = []
        try store.forEachFlow(matching: FlowQuery(), withMessages: true) { stored.append($0) }
        XCTAssertEqual(stored.count, FilterCorpus.flows.count)
        return (store, stored)
    }

    /// The contract the local capture keeps too (CaptureStoreTests), on the shared store.
    func testTheSharedStoreKeepsTheContract() throws {
        let session = try makeSession()
        let store = store(session)
        try PostgresFlowReader(session: session).prepare()
        try checkFlowStoreContract(store, pins: PostgresPinStore(session: otherSession(session)), writer: makeWriter(session))
    }

    func testSQLAndSwiftSelectTheSameFlows() throws {
        let session = try makeSession()
        let (_, stored) = try storedCorpus(session)
        let store = store(session, rowsPerPage: 7)  // reads checked in Swift span pages
        let last = try store.lastFlowID()
        var exact = 0
        for text in FilterCorpus.expressions + ["~proxy lab", "~proxy 'lab-1$' & ~c 200", "!~proxy nobody | ~e"] {
            let filter = try FlowFilter(parsing: text)
            let query = FlowQuery(filter: filter)
            let expected = stored.filter { filter.matches($0) }.compactMap(\.id)
            XCTAssertEqual(try store.matchingFlowIDs(in: 1...last, query: query), expected, text)
            XCTAssertEqual(try store.matchingFlowIDs(among: stored.compactMap(\.id).reversed(), query: query),
                           expected.reversed(), text)
            XCTAssertEqual(try store.count(matching: query), expected.count, text)
            var exported: [Int64] = []
            try store.forEachFlow(matching: query, withMessages: false) { exported.append($0.id ?? 0) }
            XCTAssertEqual(exported, expected, text)
            let condition = PostgresFilterCondition(query)
            if condition.isExact {
                exact += 1
                let alone = try session.query("SELECT id FROM proxyapp_flows WHERE \(condition.sql) ORDER BY id")
                XCTAssertEqual(try alone.map { try $0.decode(Int64.self) }, expected, "SQL alone: \(text)")
            }
        }
        XCTAssertGreaterThanOrEqual(exact, 10, "part of the list must exercise SQL alone")
        let marked = FlowQuery(filter: try FlowFilter(parsing: "~c 200"), markedOnly: true)
        XCTAssertEqual(try store.count(matching: marked), stored.filter { $0.status == 200 && $0.marked }.count)
        let since = FlowQuery(since: FilterCorpus.start.addingTimeInterval(30))
        XCTAssertEqual(try store.count(matching: since), stored.filter { $0.startedAt >= since.since! }.count)
        XCTAssertEqual(try store.earliestStart(matching: since), stored.map(\.startedAt).filter { $0 >= since.since! }.min())
    }

    /// A 900-term chain and the deepest nesting the parser takes stay within PostgreSQL's
    /// limits and still agree with Swift.
    func testLongChainsAndDeepNesting() throws {
        let session = try makeSession()
        let (store, stored) = try storedCorpus(session)
        let orChain = (100..<999).map { "~c \($0)" }.joined(separator: " | ") + " | ~c 404"
        let deep = String(repeating: "!(", count: 16) + "~c 200" + String(repeating: ")", count: 16)
        for text in [orChain, deep, "(~c 200 | ~q) & !(~marked | ~e) & ~http"] {
            let filter = try FlowFilter(parsing: text)
            let expected = stored.filter { filter.matches($0) }.count
            XCTAssertEqual(try store.count(matching: FlowQuery(filter: filter)), expected, String(text.prefix(40)))
            XCTAssertTrue(PostgresFilterCondition(FlowQuery(filter: filter)).isExact, String(text.prefix(40)))
        }
    }

    /// Two proxies write at once while a reader tails by id, as the TUI's list does: it must
    /// see every flow. One proxy's batches are slow (large bodies: a long COPY), the other's
    /// quick; without the writers' tail lock a quick batch takes higher ids and commits while
    /// the slow one (lower ids) is still sending, the reader passes those ids, and never sees
    /// the slow batch's flows.
    func testTailingByIDMissesNothingWhileProxiesWriteAtOnce() throws {
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let writers = ["slow", "quick"].map { name -> CaptureWriter in
            makeWriter(otherSession(session), name: name, limits: .init(maxBatchSize: 16, maxBatchDelay: .milliseconds(1)))
        }
        let reader = store(session)
        let writing = DispatchGroup()
        DispatchQueue.global().async(group: writing) {
            for round in 0..<4 {
                for flow in 0..<3 { writers[0].record(Samples.flow(round * 10 + flow, bodyBytes: 4_000_000)) }
                usleep(150_000)
            }
        }
        DispatchQueue.global().async(group: writing) {
            for flow in 0..<300 {
                writers[1].record(Samples.flow(1000 + flow))
                usleep(2_000)
            }
        }
        var seen: [Int64] = []
        var covered: Int64 = 0
        func poll() throws {
            let last = try reader.lastFlowID()
            guard last > covered else { return }
            seen += try reader.matchingFlowIDs(in: (covered + 1)...last, query: FlowQuery())
            covered = last
        }
        // Poll until both writers have stored everything.
        let deadline = Date().addingTimeInterval(60)
        while try session.query("SELECT count(*) FROM proxyapp_flows").first?.decode(Int64.self) != 312, Date() < deadline {
            try poll()
        }
        writing.wait()
        for writer in writers { flush(writer) }
        try poll()
        let all = try session.query("SELECT id FROM proxyapp_flows ORDER BY id").map { try $0.decode(Int64.self) }
        XCTAssertEqual(all.count, 312)
        XCTAssertEqual(seen, all, "\(Set(all).subtracting(seen).count) flows committed below the tail were missed")
    }

    /// The watermark step by step: a batch that announced its ids holds every reader below them
    /// until it ends (committed or rolled back); other advisory locks in the database do not
    /// count; a fresh sequence's first id is covered too.
    func testTheWatermarkStaysBelowBatchesOnTheirWay() throws {
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let reader = store(session)
        let slow = otherSession(session)
        let other = otherSession(session)
        try other.query("SELECT pg_advisory_lock(42)")  // someone else's lock: ignored
        XCTAssertEqual(try reader.lastFlowID(), 0)

        try slow.query("BEGIN")
        try PostgresTailWatermark.announce(slow)
        let slowID = try XCTUnwrap(slow.query("SELECT nextval('proxyapp_flows_id_seq')").first?.decode(Int64.self))
        XCTAssertEqual(slowID, 1, "a fresh sequence")
        let quick = makeWriter(otherSession(session), name: "quick")
        quick.record(Samples.flow(1))
        flush(quick)
        XCTAssertEqual(try session.query("SELECT max(id) FROM proxyapp_flows").first?.decode(Int64.self), 2)
        XCTAssertEqual(try reader.lastFlowID(), 0, "below the announced batch, though 2 is committed")
        try slow.query("ROLLBACK")
        XCTAssertEqual(try reader.lastFlowID(), 2, "a batch rolled back holds nothing")

        try slow.query("BEGIN")
        try PostgresTailWatermark.announce(slow)
        _ = try slow.query("SELECT nextval('proxyapp_flows_id_seq')")
        quick.record(Samples.flow(2))
        flush(quick)
        XCTAssertEqual(try reader.lastFlowID(), 2)
        try slow.query("COMMIT")
        XCTAssertEqual(try reader.lastFlowID(), 4)
        try other.query("SELECT pg_advisory_unlock(42)")
    }

    /// Reads with bodies hold about 8 MiB of them at a time: six 3 MiB bodies come in several
    /// groups, whole and in order, for an export, a filter on bodies and the newest-first reader.
    func testBodiesAreReadAFewMegabytesAtATime() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        for index in 0..<6 {
            var flow = Samples.flow(index, bodyBytes: 3 << 20)
            if index == 4 { flow.responseBody = CapturedBody(bytes: Data(repeating: UInt8(ascii: "z"), count: 3 << 20), size: 3 << 20) }
            writer.record(flow)
        }
        flush(writer)
        let store = store(session, rowsPerPage: 4)
        var exported: [Flow] = []
        try store.forEachFlow(matching: FlowQuery(), withMessages: false) { exported.append($0) }
        XCTAssertEqual(exported.map(\.path), (0..<6).map { "/item/\($0)" })
        XCTAssertEqual(exported.map(\.responseBody.bytes.count), Array(repeating: 3 << 20, count: 6))
        XCTAssertEqual(exported[2].responseBody.bytes.first, 2)
        let zzz = FlowQuery(filter: try FlowFilter(parsing: "~bs zzzz"))
        XCTAssertEqual(try store.matchingFlowIDs(in: 1...store.lastFlowID(), query: zzz), [exported[4].id!])
        XCTAssertEqual(try store.count(matching: zzz), 1)
        let newest = try reader(session).latestFlows(limit: 3, bodies: true)
        XCTAssertEqual(newest.map(\.path), ["/item/5", "/item/4", "/item/3"])
        XCTAssertEqual(newest[1].responseBody.bytes.last, UInt8(ascii: "z"))
    }

    /// A row no proxyapp wrote (an unknown kind, a header list that is not JSON) is left out of
    /// listings and never matches, and the rows around it still show; opening it says why not.
    func testARowEditedByHandNeverHidesTheOthers() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        for index in 0..<3 { writer.record(Samples.flow(index)) }
        flush(writer)
        try session.query("UPDATE proxyapp_flows SET kind = 'bogus' WHERE id = 2")
        try session.query("UPDATE proxyapp_flows SET request_headers = 'not json' WHERE id = 3")
        let store = store(session, rowsPerPage: 1)
        XCTAssertEqual(try store.listedFlows(ids: [1, 2, 3]).compactMap(\.id), [1])
        XCTAssertEqual(try store.matchingFlowIDs(in: 1...3, query: FlowQuery(filter: try FlowFilter(parsing: "~d origin"))), [1])
        XCTAssertEqual(try store.matchingFlowIDs(among: [3, 2, 1], query: FlowQuery(filter: try FlowFilter(parsing: "~u item"))),
                       [1])
        XCTAssertThrowsError(try store.flow(id: 2)) { error in
            XCTAssertEqual("\(error)", "a flow in the PostgreSQL store cannot be read: unknown flow kind bogus")
        }
    }

    /// The TUI's list over the shared store: the first screen, then flows from two proxies as
    /// they arrive, each row naming its proxy; a filter on the proxy name.
    func testTheTUIListTailsEveryProxysFlows() throws {
        let session = try makeSession()
        let first = makeWriter(session, name: "lab-1")
        let second = makeWriter(PostgresSession(address: session.address), name: "ci-b")
        for index in 0..<3 { first.record(Samples.flow(index)) }
        flush(first)
        let feed = FlowListFeed(repository: store(session), pollInterval: 0.02)
        feed.start()
        defer { feed.stop() }
        try waitUntil { feed.latest().totalRows == 3 }
        for index in 3..<6 { second.record(Samples.flow(index)) }
        flush(second)
        try waitUntil { feed.latest().totalRows == 6 }
        feed.request(0..<6)
        try waitUntil { feed.latest().window?.rows.count == 6 }
        let rows = try XCTUnwrap(feed.latest().window?.rows)
        XCTAssertEqual(rows.map(\.proxy), ["lab-1", "lab-1", "lab-1", "ci-b", "ci-b", "ci-b"])
        XCTAssertEqual(rows.map(\.path), (0..<6).map { "/item/\($0)" })

        feed.setQuery(FlowQuery(filter: try FlowFilter(parsing: "~proxy ci")))
        try waitUntil { !feed.latest().scanning && feed.latest().totalRows == 3 }
        XCTAssertEqual(feed.ids(at: 0..<3), try reader(session).latestFlows(limit: 3).compactMap(\.id).reversed())
    }

    private func reader(_ session: PostgresSession) -> PostgresFlowReader {
        PostgresFlowReader(session: session)
    }

    func testListingsDetailMessagesAndEdits() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        writer.record(Samples.flow(1, bodyBytes: 5_000))
        var upgrade = Samples.flow(2)
        upgrade.status = 101
        let key = try XCTUnwrap(writer.recordOpen(upgrade))
        let time = Date(timeIntervalSince1970: 1_763_760_100)
        writer.append((0..<5).map { CapturedMessage(direction: .sent, time: time, kind: .text, payload: Data("m\($0)".utf8)) },
                      to: key)
        writer.record(Samples.flow(3))
        flush(writer)
        let store = store(session)
        let ids = try store.matchingFlowIDs(in: 1...store.lastFlowID(), query: FlowQuery())
        XCTAssertEqual(ids.count, 3)

        let listed = try store.listedFlows(ids: [ids[2], 999, ids[0]])
        XCTAssertEqual(listed.map(\.id), [ids[2], ids[0]], "in the order asked, missing ids left out")
        XCTAssertEqual(listed[1].responseBody.bytes.count, 0, "a listing reads no bodies")
        XCTAssertEqual(listed[1].responseBody.size, 5_000, "but keeps their sizes")
        XCTAssertEqual(try store.flow(id: ids[0])?.responseBody.bytes.count, 5_000)
        XCTAssertNil(try store.flow(id: 999))

        let socket = try XCTUnwrap(ids.first { try store.flow(id: $0)?.status == 101 })
        XCTAssertEqual(try store.messages(flowID: socket, offset: 1, limit: 2).map { String(decoding: $0.payload, as: UTF8.self) },
                       ["m1", "m2"])
        XCTAssertEqual(try store.messages(flowID: socket, limit: 100).count, 5)
        var exported: [Flow] = []
        try store.forEachFlow(matching: FlowQuery(), withMessages: true) { exported.append($0) }
        XCTAssertEqual(exported.first { $0.id == socket }?.webSocketMessages?.count, 5)
        XCTAssertEqual(try store.matchingFlowIDs(in: 1...ids[2], query: FlowQuery(filter: try FlowFilter(parsing: "~b m3"))),
                       [socket], "a WebSocket's messages are its bodies")
        XCTAssertEqual(try reader(session).latestFlows(limit: 5, matching: try FlowFilter(parsing: "~b m3")).compactMap(\.id),
                       [socket], "for `flows --store` too")

        XCTAssertTrue(try store.setMarked(true, id: ids[1]))
        XCTAssertFalse(try store.setMarked(true, id: 999))
        XCTAssertEqual(try store.matchingFlowIDs(in: 1...ids[2], query: FlowQuery(markedOnly: true)), [ids[1]])
        try store.delete(ids: [ids[0], 999])
        XCTAssertEqual(try store.count(matching: FlowQuery()), 2)
        XCTAssertEqual(try store.deleteAllFlows(), 2)
        XCTAssertEqual(try store.count(matching: FlowQuery()), 0)
        XCTAssertEqual(try session.query("SELECT count(*) FROM proxyapp_messages").first?.decode(Int64.self), 0)
        XCTAssertTrue(store.isShared)
        XCTAssertEqual(try store.pinnedDomains(), [], "the shared pins (PostgresPinStoreTests)")
    }

    /// `proxyapp search --store`: the newest matches with excerpts, found without an index.
    func testSearchFindsWordsWithExcerpts() throws {
        let session = try makeSession()
        let (_, _) = try storedCorpus(session)
        let search = try FullTextQuery(parsing: "password")
        let filter = FlowFilter(.fullText(search, .either), text: "password")
        let hits = try reader(session).latestFullTextHits(search, matching: filter, limit: 3)
        XCTAssertEqual(hits.count, 3)
        XCTAssertEqual(hits.compactMap(\.flow.id), hits.compactMap(\.flow.id).sorted(by: >), "newest first")
        for hit in hits {
            XCTAssertTrue(hit.excerpts.contains { $0.text.contains("\(FullTextHit.matchStart)password") }, "\(hit.excerpts)")
            XCTAssertTrue(hit.flow.requestBody.bytes.isEmpty, "hits keep sizes, not bodies")
        }
        let all = FilterCorpus.flows.filter { filter.matches($0) }.count
        XCTAssertEqual(try reader(session).count(matching: filter), all)
    }

    private func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw TimeoutError() }
            usleep(5_000)
        }
    }

    private struct TimeoutError: Error, CustomStringConvertible {
        var description: String { "the condition did not come true within the time allowed" }
    }
}
