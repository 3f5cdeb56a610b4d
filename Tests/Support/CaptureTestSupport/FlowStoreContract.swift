import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// What every capture must do for the TUI, `export` and `pins`, checked the same way on each:
/// the local SQLite capture (CaptureStoreTests) and the shared PostgreSQL one
/// (SharedCaptureTests). A store passes when its answers agree with the Swift filter evaluated
/// on its own flows, and its edits show in its later reads.
extension XCTestCase {
    /// Records `FilterCorpus.flows` and a WebSocket flow through `writer` into the empty capture
    /// behind `store` and `pins`, then checks every `FlowStore` and `PinStore` method.
    public func checkFlowStoreContract(_ store: any FlowStore, pins: any PinStore, writer: CaptureWriter,
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try store.lastFlowID(), 0, "an empty capture", file: file, line: line)
        XCTAssertEqual(try store.count(matching: FlowQuery()), 0, file: file, line: line)

        for flow in FilterCorpus.flows { writer.record(flow) }
        var upgrade = FilterCorpus.flows[0]
        upgrade.status = 101
        let key = try XCTUnwrap(writer.recordOpen(upgrade), file: file, line: line)
        writer.append((0..<3).map {
            CapturedMessage(direction: .received, time: FilterCorpus.start, kind: .text, payload: Data("frame \($0)".utf8))
        }, to: key)
        flush(writer, file: file, line: line)

        let last = try store.lastFlowID()
        let ids = try store.matchingFlowIDs(in: 1...last, query: FlowQuery())
        XCTAssertEqual(ids.count, FilterCorpus.flows.count + 1, file: file, line: line)
        XCTAssertEqual(ids, ids.sorted(), "ascending", file: file, line: line)
        var stored: [Flow] = []
        try store.forEachFlow(matching: FlowQuery(), withMessages: true) { stored.append($0) }
        XCTAssertEqual(stored.compactMap(\.id), ids, file: file, line: line)

        // Every filter: the store's selections agree with Swift on the store's own flows.
        for text in FilterCorpus.expressions {
            let filter = try FlowFilter(parsing: text)
            let query = FlowQuery(filter: filter)
            let expected = stored.filter { filter.matches($0) }.compactMap(\.id)
            XCTAssertEqual(try store.matchingFlowIDs(in: 1...last, query: query), expected, text, file: file, line: line)
            XCTAssertEqual(try store.matchingFlowIDs(among: ids.reversed(), query: query), expected.reversed(), text,
                           file: file, line: line)
            XCTAssertEqual(try store.count(matching: query), expected.count, text, file: file, line: line)
        }
        let since = FlowQuery(since: FilterCorpus.start.addingTimeInterval(20))
        XCTAssertEqual(try store.earliestStart(matching: since),
                       stored.map(\.startedAt).filter { $0 >= since.since! }.min(), file: file, line: line)

        // A listing: in the order asked, missing ids left out, sizes without bodies.
        let withBody = try XCTUnwrap(stored.first { !$0.responseBody.bytes.isEmpty }, file: file, line: line)
        let listed = try store.listedFlows(ids: [ids[1], last + 100, withBody.id!])
        XCTAssertEqual(listed.compactMap(\.id), [ids[1], withBody.id!], file: file, line: line)
        XCTAssertTrue(listed[1].responseBody.bytes.isEmpty, file: file, line: line)
        XCTAssertEqual(listed[1].responseBody.size, withBody.responseBody.size, file: file, line: line)
        XCTAssertEqual(try store.flow(id: withBody.id!)?.responseBody.bytes, withBody.responseBody.bytes,
                       file: file, line: line)
        XCTAssertNil(try store.flow(id: last + 100), file: file, line: line)

        let socket = try XCTUnwrap(stored.first { $0.messageCount > 0 }?.id, file: file, line: line)
        XCTAssertEqual(try store.messages(flowID: socket, offset: 1, limit: 5).map { String(decoding: $0.payload, as: UTF8.self) },
                       ["frame 1", "frame 2"], file: file, line: line)

        // Edits.
        let unmarked = try XCTUnwrap(stored.first { !$0.marked }?.id, file: file, line: line)
        XCTAssertTrue(try store.setMarked(true, id: unmarked), file: file, line: line)
        XCTAssertFalse(try store.setMarked(true, id: last + 100), file: file, line: line)
        XCTAssertTrue(try store.matchingFlowIDs(in: 1...last, query: FlowQuery(markedOnly: true)).contains(unmarked),
                      file: file, line: line)
        try store.delete(ids: [unmarked, last + 100])
        XCTAssertEqual(try store.count(matching: FlowQuery()), ids.count - 1, file: file, line: line)
        XCTAssertEqual(try store.deleteAllFlows(), ids.count - 1, file: file, line: line)
        XCTAssertEqual(try store.count(matching: FlowQuery()), 0, file: file, line: line)

        // Pins.
        let client = ClientIdentity(address: "10.0.0.7", fingerprint: "t13d_aaaa_bbbb")
        let pin = PinnedDomain(host: "bank.example", reason: "client rejected the certificate", evidence: "unknown_ca",
                               firstSeen: FilterCorpus.start, lastSeen: FilterCorpus.start.addingTimeInterval(60), count: 2,
                               client: client, alert: "unknown_ca", tlsVersion: "TLS 1.3")
        let anyClient = PinnedDomain(host: "old.example", reason: "r", evidence: "e", firstSeen: FilterCorpus.start,
                                     lastSeen: FilterCorpus.start, count: 1)
        let counts = try pins.applyPinChanges(saving: [pin, anyClient], removing: [])
        XCTAssertGreaterThan(counts.after, counts.before, file: file, line: line)
        XCTAssertEqual(try pins.pinnedDomainsAndChangeCount().changeCount, counts.after, file: file, line: line)
        XCTAssertEqual(try pins.pinnedDomains(), [pin, anyClient], "by host", file: file, line: line)
        XCTAssertEqual(try store.pinnedDomains(), [pin, anyClient], "the TUI's view of them", file: file, line: line)
        XCTAssertEqual(try pins.removePins(expiredBefore: FilterCorpus.start), 1, file: file, line: line)
        XCTAssertEqual(try pins.removePins(host: "bank.example", clientAddress: "10.0.0.8"), 0, file: file, line: line)
        XCTAssertTrue(try store.removePin(pin.key), file: file, line: line)
        XCTAssertFalse(try pins.removePin(pin.key), file: file, line: line)
        _ = try pins.applyPinChanges(saving: [pin], removing: [])
        XCTAssertEqual(try pins.removeAllPins(), 1, file: file, line: line)
        XCTAssertEqual(try pins.pinnedDomains(), [], file: file, line: line)
    }
}
