import CaptureTestSupport
import Dispatch
import Foundation
import Logging
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

final class CaptureWriterTests: XCTestCase {
    /// Flows recorded from many threads at once all land in the database, each once; the
    /// statistics match exactly and `onCommitted` sees every flow with its new id.
    func testConcurrentRecordsAllLand() throws {
        let repository = try makeRepository()
        let committed = Locked<[Flow]>([])
        let writer = CaptureWriter(
            repository: repository, limits: .init(maxBatchSize: 64), logger: CapturingLogHandler().logger,
            onCommitted: { flows in committed.withValue { $0.append(contentsOf: flows) } })
        let threads = 8
        let perThread = 600
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                writer.record(Samples.flow(thread * perThread + index, bodyBytes: index % 3 == 0 ? 100 : 0))
            }
        }
        flush(writer)

        let total = threads * perThread
        XCTAssertEqual(writer.statistics, CaptureStatistics(flowsWritten: total))
        XCTAssertEqual(try repository.count(), total)
        let seen = committed.withValue { $0 }
        XCTAssertEqual(seen.count, total)
        let ids = seen.compactMap(\.id)
        XCTAssertEqual(Set(ids).count, total)
        XCTAssertEqual(Set(seen.map(\.path)).count, total)
        // The ids handed to onCommitted are the rows' ids.
        for flow in seen.prefix(50) {
            let stored = try XCTUnwrap(try repository.flow(id: try XCTUnwrap(flow.id)))
            XCTAssertEqual(stored, flow)
        }
        writer.close()
    }

    /// With a small delay and a large batch size, a few flows are committed together once the
    /// delay passes, without any flush.
    /// The writer's thread carries its name where `top -H` and `perf` look (Linux).
    func testWriterThreadIsNamed() throws {
        #if os(Linux)
        let writer = CaptureWriter(repository: try makeRepository(), logger: CapturingLogHandler().logger)
        writer.record(Samples.flow(1))
        flush(writer)  // the thread has run by now
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        XCTAssertTrue(names.contains("proxyapp-writer\n"), "thread names: \(names)")
        #endif
    }

    func testBatchCommitsAfterTheDelay() throws {
        let repository = try makeRepository()
        let batches = Locked<[Int]>([])
        let committed = expectation(description: "batch committed")
        let writer = CaptureWriter(
            repository: repository, limits: .init(maxBatchSize: 512, maxBatchDelay: .milliseconds(300)),
            logger: CapturingLogHandler().logger,
            onCommitted: { flows in
                batches.withValue { $0.append(flows.count) }
                committed.fulfill()
            })
        for index in 0..<3 { writer.record(Samples.flow(index)) }
        wait(for: [committed], timeout: 10)
        XCTAssertEqual(batches.withValue { $0 }, [3])
        XCTAssertEqual(try repository.count(), 3)
        writer.close()
    }

    /// A full batch is committed at once, without waiting for a (long) delay; `flush` commits
    /// the remainder right away.
    func testFullBatchesCommitWithoutWaitingAndFlushTakesTheRest() throws {
        let repository = try makeRepository()
        let batches = Locked<[Int]>([])
        let twoBatches = expectation(description: "two full batches")
        twoBatches.expectedFulfillmentCount = 2
        let writer = CaptureWriter(
            repository: repository, limits: .init(maxBatchSize: 10, maxBatchDelay: .seconds(600)),
            logger: CapturingLogHandler().logger,
            onCommitted: { flows in
                batches.withValue { $0.append(flows.count) }
                if flows.count == 10 { twoBatches.fulfill() }
            })
        for index in 0..<25 { writer.record(Samples.flow(index)) }
        wait(for: [twoBatches], timeout: 10)
        XCTAssertEqual(try repository.count(), 20)
        flush(writer, timeout: 20)
        XCTAssertEqual(batches.withValue { $0 }, [10, 10, 5])
        XCTAssertEqual(try repository.latestFlows(limit: 1).first?.path, "/item/24")
        writer.close()
    }

    /// Large bodies are written at once instead of waiting (in memory) for the batch delay.
    func testLargeBodiesAreWrittenWithoutWaitingForTheDelay() throws {
        let repository = try makeRepository()
        let committed = expectation(description: "large body committed")
        let writer = CaptureWriter(
            repository: repository, limits: .init(maxBatchSize: 512, maxBatchDelay: .seconds(600)),
            logger: CapturingLogHandler().logger,
            onCommitted: { _ in committed.fulfill() })
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody(bytes: Data(count: CaptureWriterState.bodyBytesDue), size: Int64(CaptureWriterState.bodyBytesDue))
        writer.record(flow)
        wait(for: [committed], timeout: 10)
        XCTAssertEqual(try repository.count(), 1)
        writer.close()
    }

    /// When the writer falls behind, the queue strips bodies first and drops whole flows only at
    /// the flow limit; the statistics count both exactly and one warning is logged per kind.
    func testBackloggedWriterStripsBodiesThenDropsFlows() throws {
        let repository = try makeRepository()
        let log = CapturingLogHandler()
        let writerBusy = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let writer = CaptureWriter(
            repository: repository,
            limits: .init(maxQueuedFlows: 5, maxQueuedBodyBytes: 1_500, maxBatchSize: 1,
                          maxBatchDelay: .zero),
            logger: log.logger,
            onCommitted: { _ in
                // Hold the writer inside its first batch so the queue backs up.
                let isFirst = first.withValue { value -> Bool in
                    defer { value = false }
                    return value
                }
                if isFirst {
                    writerBusy.signal()
                    release.wait()
                }
            })
        writer.record(Samples.flow(0))
        writerBusy.wait()
        for index in 1...8 {
            writer.record(Samples.flow(index, bodyBytes: 1_000))  // 1 fits, 4 stripped, 3 dropped
        }
        XCTAssertEqual(writer.statistics, CaptureStatistics(
            flowsWritten: 0, flowsDropped: 3, bodyBytesDropped: 4_000, flowsStripped: 4))
        release.signal()
        flush(writer)

        XCTAssertEqual(writer.statistics, CaptureStatistics(
            flowsWritten: 6, flowsDropped: 3, bodyBytesDropped: 4_000, flowsStripped: 4))
        let stored = Array(try repository.latestFlows(limit: 10).reversed())
        XCTAssertEqual(stored.map(\.path), (0...5).map { "/item/\($0)" })
        XCTAssertEqual(stored[1].responseBody.bytes.count, 1_000)
        XCTAssertFalse(stored[1].responseBody.truncated)
        for flow in stored[2...5] {
            XCTAssertEqual(flow.responseBody, CapturedBody(bytes: Data(), size: 1_000, truncated: true))
        }
        let warnings = log.entries.filter { $0.level == .warning }.map(\.message)
        XCTAssertEqual(warnings.filter { $0.contains("dropping flows") }.count, 1, "\(warnings)")
        XCTAssertEqual(warnings.filter { $0.contains("without bodies") }.count, 1, "\(warnings)")
        writer.close()
    }

    /// A writer whose database refuses writes keeps taking `record` calls without blocking,
    /// counts every lost batch and flow, and logs the failure once.
    ///
    /// "Without blocking" is shown by the event, not a stopwatch: the writer's thread is held
    /// inside its failure (in the log call) while 1,000 records are made from another thread;
    /// a `record` that waited on the writer would never return, and the safety bound fails.
    func testFailingDatabaseIsCountedAndLoggedOnce() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        _ = try TrafficDatabase(path: path)
        let readOnly = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: path))
        let writerFailing = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let log = CapturingLogHandler(onEntry: { entry in
            guard entry.level == .error else { return }
            let isFirst = first.withValue { value -> Bool in
                defer { value = false }
                return value
            }
            guard isFirst else { return }
            writerFailing.signal()
            release.wait()
        })
        let writer = CaptureWriter(repository: readOnly, limits: .init(maxBatchSize: 10),
                                   logger: log.logger, onCommitted: { _ in XCTFail("nothing commits") })

        writer.record(Samples.flow(0))
        XCTAssertEqual(writerFailing.wait(timeout: .now() + 60), .success, "the first batch never failed")
        let recorded = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for index in 1..<1_000 { writer.record(Samples.flow(index)) }
            recorded.signal()
        }
        let returned = recorded.wait(timeout: .now() + 60)
        release.signal()
        XCTAssertEqual(returned, .success, "record waited on the database while the writer was stuck in it")
        if returned != .success { recorded.wait() }
        flush(writer)
        for index in 0..<55 { writer.record(Samples.flow(index)) }
        flush(writer)

        let statistics = writer.statistics
        XCTAssertEqual(statistics.flowsWritten, 0)
        XCTAssertEqual(statistics.flowsFailed, 1_055)
        XCTAssertGreaterThanOrEqual(statistics.batchesFailed, 106)  // at most 10 flows per batch
        XCTAssertEqual(log.entries.filter { $0.level == .error }.count, 1, "\(log.entries)")
        // The cause in words (CaptureErrorText), not SQLite's message and the SQL it ran.
        let cause = try XCTUnwrap(log.entries.first { $0.level == .error }?.metadata["error"])
        XCTAssertTrue(cause.contains("cannot be written"), cause)
        XCTAssertFalse(cause.contains("SQLite error"), cause)
        XCTAssertFalse(cause.contains("INSERT"), cause)
        XCTAssertEqual(try readOnly.count(), 0)
        writer.close()
    }

    /// Deleting the database's directory under a running writer loses the batches after it
    /// (counted, logged once) instead of writing into an unlinked file or crashing.
    func testDeletedDatabaseDirectoryIsCounted() throws {
        let directory = try makeTemporaryDirectory()
        let repository = TrafficRepository(database: try TrafficDatabase(path: directory.file("capture.sqlite")))
        let log = CapturingLogHandler()
        let writer = CaptureWriter(repository: repository, limits: .init(maxBatchSize: 8), logger: log.logger)
        for index in 0..<20 { writer.record(Samples.flow(index)) }
        flush(writer)
        XCTAssertEqual(writer.statistics.flowsWritten, 20)

        try FileManager.default.removeItem(at: directory.url)
        for index in 20..<60 { writer.record(Samples.flow(index)) }
        flush(writer)
        let statistics = writer.statistics
        XCTAssertEqual(statistics.flowsWritten, 20)
        XCTAssertEqual(statistics.flowsFailed, 40)
        XCTAssertGreaterThanOrEqual(statistics.batchesFailed, 5)
        XCTAssertEqual(log.entries.filter { $0.level == .error }.count, 1, "\(log.entries)")
        writer.close()
    }

    /// After `close`, records are counted as dropped and nothing else happens; closing twice
    /// and flushing after close return at once.
    func testRecordAfterCloseIsDropped() throws {
        let repository = try makeRepository()
        let writer = CaptureWriter(repository: repository, logger: CapturingLogHandler().logger)
        writer.record(Samples.flow(0))
        writer.close()
        XCTAssertEqual(try repository.count(), 1)
        writer.record(Samples.flow(1))
        flush(writer)
        writer.close()
        XCTAssertEqual(writer.statistics, CaptureStatistics(flowsWritten: 1, flowsDropped: 1))
        XCTAssertEqual(try repository.count(), 1)
    }

    /// `flush` and `close` called from `onCommitted` (on the writer thread) return instead of
    /// waiting for the writer thread itself.
    func testFlushAndCloseFromOnCommittedDoNotDeadlock() throws {
        let repository = try makeRepository()
        let box = Locked<CaptureWriter?>(nil)
        let returned = expectation(description: "flush and close returned on the writer thread")
        let writer = CaptureWriter(
            repository: repository, logger: CapturingLogHandler().logger,
            onCommitted: { _ in
                guard let writer = box.withValue({ $0 }) else { return }
                writer.flush()
                writer.close()
                returned.fulfill()
            })
        box.withValue { $0 = writer }
        writer.record(Samples.flow(0))
        wait(for: [returned], timeout: 10)
        flush(writer)
        writer.record(Samples.flow(1))
        XCTAssertEqual(writer.statistics, CaptureStatistics(flowsWritten: 1, flowsDropped: 1))
        box.withValue { $0 = nil }
    }

    /// A writer released without `close` still writes what it was given.
    func testReleasedWriterDrainsItsQueue() throws {
        let repository = try makeRepository()
        let done = expectation(description: "committed")
        do {
            let writer = CaptureWriter(repository: repository, limits: .init(maxBatchDelay: .seconds(600)),
                                       logger: CapturingLogHandler().logger,
                                       onCommitted: { _ in done.fulfill() })
            writer.record(Samples.flow(0))
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(try repository.count(), 1)
    }

    /// `onIdle` runs once after a burst, a second after the last write, and not again until
    /// something else was written.
    func testOnIdleRunsOnceAfterABurst() throws {
        let repository = try makeRepository()
        let idles = Locked(0)
        let writer = CaptureWriter(repository: repository, limits: .init(maxBatchDelay: .milliseconds(10)),
                                   logger: CapturingLogHandler().logger, onIdle: { idles.withValue { $0 += 1 } })
        defer { writer.close() }
        XCTAssertEqual(idles.withValue { $0 }, 0, "nothing written yet: no idle call")
        for index in 0..<20 { writer.record(Samples.flow(index)) }
        flush(writer)
        for _ in 0..<500 where idles.withValue({ $0 }) == 0 { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(idles.withValue { $0 }, 1)
        Thread.sleep(forTimeInterval: CaptureWriterState.idleDelay * 1.5)
        XCTAssertEqual(idles.withValue { $0 }, 1, "still idle, nothing written: not called again")
        writer.record(Samples.flow(99))
        flush(writer)
        for _ in 0..<500 where idles.withValue({ $0 }) == 1 { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(idles.withValue { $0 }, 2)
    }

    /// A backlog of `backlogTrimDepth` items or more, once worked off, runs `onBacklogWorkedOff`
    /// (the run's memory trim) while traffic goes on; a shallower one does not, and neither is
    /// reported as idle. The writer is held inside its first `onCommitted` while the backlog is
    /// recorded; a flow every 20 ms afterwards keeps the queue from ever staying empty for
    /// `idleDelay`.
    func testWorkedOffBacklogGivesMemoryBackWhileTrafficGoesOn() throws {
        for (depth, expectsTrim) in [(CaptureWriterState.backlogTrimDepth + 500, true), (1_000, false)] {
            let repository = try makeRepository()
            let idles = Locked(0)
            let workedOff = Locked(0)
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = Locked(true)
            let writer = CaptureWriter(
                repository: repository, limits: .init(maxBatchDelay: .milliseconds(5)), logger: CapturingLogHandler().logger,
                onCommitted: { _ in
                    guard first.withValue({ value -> Bool in
                        defer { value = false }
                        return value
                    }) else { return }
                    holding.signal()
                    release.wait()
                },
                onIdle: { idles.withValue { $0 += 1 } },
                onBacklogWorkedOff: { workedOff.withValue { $0 += 1 } })
            writer.record(Samples.flow(0))
            XCTAssertEqual(holding.wait(timeout: .now() + 60), .success, "the first batch never committed")
            for index in 1...depth { writer.record(Samples.flow(index)) }
            release.signal()
            flush(writer)
            let feeding = Locked(true)
            let fed = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                var index = depth + 1
                while feeding.withValue({ $0 }) {
                    writer.record(Samples.flow(index))
                    index += 1
                    Thread.sleep(forTimeInterval: 0.02)
                }
                fed.signal()
            }
            if expectsTrim {
                for _ in 0..<1_500 where workedOff.withValue({ $0 }) == 0 { Thread.sleep(forTimeInterval: 0.02) }
            } else {
                Thread.sleep(forTimeInterval: CaptureWriterState.idleDelay * 1.5)
            }
            feeding.withValue { $0 = false }
            fed.wait()
            XCTAssertEqual(workedOff.withValue { $0 }, expectsTrim ? 1 : 0, "backlog of \(depth)")
            XCTAssertEqual(idles.withValue { $0 }, 0, "traffic never stopped: not idle")
            writer.close()
            XCTAssertEqual(writer.statistics.flowsDropped, 0)
        }
    }
}
