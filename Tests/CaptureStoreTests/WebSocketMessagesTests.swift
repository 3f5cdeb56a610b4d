import CaptureTestSupport
import Foundation
import GRDB
import Logging
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// WebSocket messages through the capture writer: they follow their open flow in the queue, are
/// stored in order with everything they carry, raise the flow's message count while it is open,
/// and its end sets its counts; messages of a flow that was dropped are dropped; they leave with
/// their flow; and payloads give way first when the queue is over its byte budget.
final class WebSocketMessagesTests: XCTestCase {
    private let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    private let start = Date(timeIntervalSince1970: 1_795_338_303.5)

    private func message(_ direction: CapturedMessage.Direction, _ text: String, at offset: Double = 0) -> CapturedMessage {
        CapturedMessage(direction: direction, time: start.addingTimeInterval(offset), kind: .text, payload: Data(text.utf8))
    }

    func testMessagesFollowTheirOpenFlow() throws {
        let repository = try makeRepository()
        let writer = CaptureWriter(repository: repository, logger: logger)
        defer { writer.close() }
        var upgrade = Samples.flow(1)
        upgrade.status = 101
        let key = try XCTUnwrap(writer.recordOpen(upgrade))
        writer.record(Samples.flow(2))
        writer.append([message(.sent, "hello"), message(.received, "hi", at: 0.25)], to: key)
        flush(writer)
        let id = try XCTUnwrap(repository.latestFlows(limit: 2).last?.id)
        XCTAssertEqual(try repository.flow(id: id)?.messageCount, 2, "the count grows while the flow is open")

        let close = CapturedMessage(direction: .received, time: start.addingTimeInterval(1), kind: .close, payload: Data([3, 232]),
                                    size: 2, compressed: false, closeCode: 1000, closeReason: "")
        let bigger = CapturedMessage(direction: .sent, time: start.addingTimeInterval(0.5), kind: .binary,
                                     payload: Data([0, 1, 2]), size: 9000, truncated: true, compressed: true)
        writer.append([bigger, close], to: key)
        writer.finish(key, with: OpenFlowEnd(finishedAt: start.addingTimeInterval(2), bytesUp: 123, bytesDown: 456,
                                             note: "some payloads were not kept"))
        flush(writer)
        let messages = try repository.messages(flowID: id)
        XCTAssertEqual(messages, [message(.sent, "hello"), message(.received, "hi", at: 0.25), bigger, close])
        XCTAssertEqual(try repository.messages(flowID: id, offset: 1, limit: 2).map(\.kind), [.text, .binary])
        let flow = try XCTUnwrap(repository.flow(id: id))
        XCTAssertEqual(flow.messageCount, 4)
        XCTAssertEqual(flow.bytesUp, 123)
        XCTAssertEqual(flow.bytesDown, 456)
        XCTAssertEqual(flow.finishedAt, start.addingTimeInterval(2))
        XCTAssertEqual(flow.note, "some payloads were not kept")
        XCTAssertNil(flow.error)
        XCTAssertEqual(writer.statistics.flowsWritten, 2)

        // Messages after the end, or for a key never opened, go nowhere.
        writer.append([message(.sent, "late")], to: key)
        writer.append([message(.sent, "stranger")], to: OpenFlowKey(999))
        flush(writer)
        XCTAssertEqual(try repository.messages(flowID: id).count, 4)
    }

    func testMessagesLeaveWithTheirFlow() throws {
        let repository = try makeRepository()
        let writer = CaptureWriter(repository: repository, logger: logger)
        defer { writer.close() }
        let key = try XCTUnwrap(writer.recordOpen(Samples.flow(1)))
        writer.append([message(.sent, "bye")], to: key)
        flush(writer)
        let id = try XCTUnwrap(repository.latestFlows(limit: 1).first?.id)
        let other = try XCTUnwrap(writer.recordOpen(Samples.flow(2)))
        writer.append([message(.sent, "stays")], to: other)
        flush(writer)
        try repository.delete(ids: [id])
        let count = { try repository.database.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM messages") } }
        XCTAssertEqual(try count(), 1, "only the deleted flow's messages went")
        try repository.deleteAllFlows()
        XCTAssertEqual(try count(), 0)
    }

    /// Retention takes the messages of the flows it removes (its delete returns the removed ids
    /// and their messages are deleted by id), and leaves those of a marked flow it keeps and of
    /// newer flows; a removed flow that had no messages is among them.
    func testRetentionTakesTheMessagesOfTheFlowsItRemoves() throws {
        let repository = try makeRepository()
        var flows = (1...6).map { index -> Flow in
            var flow = Samples.flow(index)
            if index != 4 { flow.webSocketMessages = [message(.sent, "m\(index)a"), message(.received, "m\(index)b")] }
            return flow
        }
        flows[1].marked = true
        let ids = try repository.insert(flows)
        let perFlow = {
            try repository.database.pool.read { db in
                try Dictionary(grouping: Int64.fetchAll(db, sql: "SELECT flow_id FROM messages"), by: { $0 }).mapValues(\.count)
            }
        }
        XCTAssertEqual(try perFlow(), [ids[0]: 2, ids[1]: 2, ids[2]: 2, ids[4]: 2, ids[5]: 2])

        // Down to two unmarked flows: #1, #3 and #4 go (5 % of a limit of 2 adds no extra flow).
        _ = try repository.enforce(RetentionPolicy(maxFlows: 2, keepMarked: true))
        let left = try repository.latestFlows(limit: 10).compactMap(\.id).sorted()
        XCTAssertEqual(left, [ids[1], ids[4], ids[5]])
        XCTAssertEqual(try perFlow(), [ids[1]: 2, ids[4]: 2, ids[5]: 2], "only the removed flows' messages went")
        XCTAssertEqual(try repository.messages(flowID: ids[1]).map(\.payload), [Data("m2a".utf8), Data("m2b".utf8)])
    }

    func testQueuePolicyForMessages() {
        var queue = CaptureQueue(maxFlows: 3, maxBodyBytes: 10)
        let key = OpenFlowKey(1)
        XCTAssertEqual(queue.enqueue(Samples.flow(1), open: key), .queued)
        XCTAssertEqual(queue.enqueue([message(.sent, "12345678")], to: key), .queued)
        XCTAssertEqual(queue.enqueue([message(.sent, "123"), message(.received, "4")], to: key),
                       .queuedWithoutBodies(droppedBytes: 4), "over the byte budget: payloads go, messages stay")
        XCTAssertEqual(queue.enqueue([message(.sent, "x")], to: key), .dropped, "full: dropped whole")
        XCTAssertEqual(queue.messageBatchesDropped, 1)
        let items = queue.dequeueItems(maxCount: 10)
        XCTAssertEqual(items.count, 3)
        guard case .messages(let stripped, _) = items[2] else { return XCTFail("\(items[2])") }
        XCTAssertEqual(stripped.map(\.payload), [Data(), Data()])
        XCTAssertEqual(stripped.map(\.truncated), [true, true])
        XCTAssertEqual(stripped.map(\.size), [3, 1], "sizes are kept")
        XCTAssertEqual(queue.queuedBodyBytes, 0)
    }

    /// An imported WebSocket flow brings its messages (HAR `_webSocketMessages`).
    func testImportedFlowsStoreTheirMessages() throws {
        let repository = try makeRepository()
        var flow = Samples.flow(1)
        flow.status = 101
        flow.webSocketMessages = [message(.sent, "a"), message(.received, "b", at: 1)]
        flow.messageCount = 2
        let ids = try repository.insertAll([flow, Samples.flow(2)])
        XCTAssertEqual(try repository.messages(flowID: ids[0]), flow.webSocketMessages)
        XCTAssertEqual(try repository.flow(id: ids[0])?.messageCount, 2)
        XCTAssertEqual(try repository.messages(flowID: ids[1]), [])
    }

    func testAVersion8CaptureIsUpgraded() throws {
        let path = try makeOldCapture(in: try makeTemporaryDirectory(), upTo: "v8-http2-details")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let flows = try repository.latestFlows(limit: 1)
        XCTAssertEqual(flows.first?.messageCount, 0)
        XCTAssertEqual(try repository.messages(flowID: try XCTUnwrap(flows.first?.id)), [])
    }
}
