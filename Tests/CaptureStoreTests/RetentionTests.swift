import CaptureTestSupport
import Foundation
import GRDB
import Logging
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// `RetentionPolicy`: the oldest flows go first, by age, by count and by size, with their body
/// files; marked flows stay when asked; the file gives its pages back; the capture writer keeps
/// within the limits as it goes.
final class RetentionTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A flow that started `age` seconds before `now`, named by `index`, with a body of `bodyBytes`.
    private func flow(_ index: Int, age: TimeInterval = 0, bodyBytes: Int = 0) -> Flow {
        var flow = Samples.flow(index)
        flow.startedAt = now.addingTimeInterval(-age)
        flow.finishedAt = flow.startedAt
        flow.responseBody = CapturedBody(bytes: Data((0..<bodyBytes).map { UInt8(truncatingIfNeeded: $0 &+ index &* 7) }),
                                         size: Int64(bodyBytes))
        return flow
    }

    private func paths(_ repository: TrafficRepository) throws -> [String] {
        try repository.latestFlows(limit: 10_000).map(\.path).sorted()
    }

    private func bodyFileCount(_ repository: TrafficRepository) -> Int {
        let directory = repository.database.bodyFiles.directory
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0 != "spool" }
            .reduce(0) { $0 + ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + $1).count) ?? 0) }
    }

    func testFlowsOlderThanTheMaximumAgeGoWithTheirBodyFiles() throws {
        let repository = try makeRepository()
        let day: TimeInterval = 86_400
        _ = try repository.insert([flow(1, age: 40 * day, bodyBytes: BodyFileStore.threshold), flow(2, age: 31 * day),
                                   flow(3, age: 29 * day), flow(4, age: 0, bodyBytes: BodyFileStore.threshold + 1)])
        XCTAssertEqual(bodyFileCount(repository), 2)
        let outcome = try repository.enforce(RetentionPolicy(maxAge: 30 * day), now: now)
        XCTAssertEqual(outcome, PruneOutcome(flowsRemoved: 2, moreDue: false))
        XCTAssertEqual(try paths(repository), ["/item/3", "/item/4"])
        XCTAssertEqual(bodyFileCount(repository), 1, "the removed flow's body file went with it")
        XCTAssertEqual(try repository.enforce(RetentionPolicy(maxAge: 30 * day), now: now).flowsRemoved, 0)
    }

    /// `maxFlows` keeps the newest; marked flows stay and are not counted, unless asked.
    func testTheNewestFlowsAreKeptAndMarkedOnesStay() throws {
        let repository = try makeRepository()
        let ids = try repository.insert((1...10).map { flow($0, age: TimeInterval(100 - $0)) })
        XCTAssertTrue(try repository.setMarked(true, id: ids[1]))
        XCTAssertEqual(try repository.enforce(RetentionPolicy(maxFlows: 3), now: now).flowsRemoved, 6)
        XCTAssertEqual(try paths(repository), ["/item/10", "/item/2", "/item/8", "/item/9"])
        XCTAssertEqual(try repository.enforce(RetentionPolicy(maxFlows: 3, keepMarked: false), now: now).flowsRemoved, 1)
        XCTAssertEqual(try paths(repository), ["/item/10", "/item/8", "/item/9"])
        let all = RetentionPolicy(maxAge: 1, keepMarked: true)
        XCTAssertTrue(try repository.setMarked(true, id: ids[9]))
        XCTAssertEqual(try repository.enforce(all, now: now.addingTimeInterval(1_000)).flowsRemoved, 2)
        XCTAssertEqual(try paths(repository), ["/item/10"], "marked: kept whatever its age")
    }

    /// Over `maxBytes` the oldest flows go until the capture (pages in use and body files) fits.
    func testTheOldestGoUntilTheCaptureFitsItsSize() throws {
        let repository = try makeRepository()
        let body = BodyFileStore.threshold  // each body a file of 256 KiB
        _ = try repository.insert((1...8).map { flow($0, age: TimeInterval(100 - $0), bodyBytes: body) })
        let full = try repository.captureSize()
        XCTAssertGreaterThan(full, Int64(8 * body))
        let limit = Int64(3 * body) + (full - Int64(8 * body))  // three bodies and the database
        let outcome = try repository.enforce(RetentionPolicy(maxBytes: limit), now: now, batchSize: 2)
        XCTAssertGreaterThanOrEqual(outcome.flowsRemoved, 5)
        XCTAssertLessThanOrEqual(try repository.captureSize(), limit)
        let kept = try paths(repository)
        XCTAssertEqual(kept, ["/item/6", "/item/7", "/item/8"].suffix(kept.count).map { $0 }, "the newest are the ones kept")
        XCTAssertEqual(bodyFileCount(repository), kept.count)
    }

    /// A pass may be cut into batches: it says when more is due, and rows named as protected
    /// (WebSockets still open) are never removed.
    func testBatchesStopWithMoreDueAndProtectedRowsStay() throws {
        let repository = try makeRepository()
        let ids = try repository.insert((1...6).map { flow($0, age: TimeInterval(100 - $0)) })
        let policy = RetentionPolicy(maxFlows: 1)
        XCTAssertEqual(try repository.enforce(policy, now: now, batchSize: 2, maxBatches: 1), PruneOutcome(flowsRemoved: 2, moreDue: true))
        let rest = try repository.enforce(policy, now: now, batchSize: 2, protected: [ids[2]])
        XCTAssertEqual(rest.moreDue, false)
        XCTAssertEqual(rest.flowRoom, 0, "at the limit: the next flow stored is due for removal")
        XCTAssertEqual(try repository.enforce(RetentionPolicy(maxFlows: 10), now: now).flowRoom, 9)
        XCTAssertEqual(try paths(repository), ["/item/3"], "the open one stays, and counts")
    }

    /// A new capture is created with incremental vacuum: removing most flows shrinks the file.
    func testRemovingFlowsShrinksTheFile() throws {
        let repository = try makeRepository()
        XCTAssertEqual(try repository.database.pool.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") }, 2)
        for chunk in 0..<4 {
            _ = try repository.insert((0..<500).map { flow(chunk * 500 + $0, age: 1, bodyBytes: 8_000) })
        }
        try repository.checkpointTruncating()
        let before = try fileSize(repository.database.path)
        XCTAssertEqual(try repository.enforce(RetentionPolicy(maxFlows: 10), now: now).flowsRemoved, 1_990)
        try repository.checkpointTruncating()
        let after = try fileSize(repository.database.path)
        XCTAssertLessThan(after, before / 10, "\(before) -> \(after) bytes")
        XCTAssertEqual(try repository.count(), 10)
    }

    private func fileSize(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// The capture writer keeps within its limits while flows keep coming (trimming up to 5 %
    /// below `maxFlows` once over it), and loses none of the newest.
    func testTheWriterKeepsWithinItsLimitsAsItGoes() throws {
        let repository = try makeRepository()
        let writer = CaptureWriter(
            repository: repository,
            limits: CaptureWriter.Limits(maxBatchSize: 50, maxBatchDelay: .milliseconds(1), retentionInterval: .zero),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            retention: RetentionPolicy(maxFlows: 100))
        for index in 0..<1_000 { writer.record(flow(index)) }
        writer.flush()
        let deadline = Date().addingTimeInterval(10)
        while try repository.count() > 100, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        writer.close()
        let kept = try repository.count()
        XCTAssertTrue((95...100).contains(kept), "\(kept) flows: at most the limit, at most 5 % under it")
        XCTAssertEqual(try repository.latestFlows(limit: kept).map(\.path), (1_000 - kept..<1_000).reversed().map { "/item/\($0)" },
                       "the newest, every one of them")
    }
}
