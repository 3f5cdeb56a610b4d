import CaptureTestSupport
import Dispatch
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

final class ConcurrentReaderTests: XCTestCase {
    /// While a writer commits batches, a separate read-only database on the same file reads
    /// counts that never go down and never fail, and sees the writes as they land.
    func testReadOnlyReaderWhileWriting() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let reader = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: path))
        let writer = CaptureWriter(repository: repository,
                                   limits: .init(maxBatchSize: 50, maxBatchDelay: .milliseconds(5)),
                                   logger: CapturingLogHandler().logger)
        let total = 6_000
        let producerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for index in 0..<total {
                writer.record(Samples.flow(index, bodyBytes: 256))
                if index % 50 == 49 { usleep(500) }
            }
            producerDone.signal()
        }

        var last = 0
        var reads = 0
        var intermediateCounts = Set<Int>()
        var producing = true
        while producing {
            producing = producerDone.wait(timeout: .now()) == .timedOut
            let count = try reader.count()
            XCTAssertGreaterThanOrEqual(count, last, "a reader saw the count go down")
            if count > 0 && count < total { intermediateCounts.insert(count) }
            last = count
            let latest = try reader.latestFlows(limit: 5)
            XCTAssertLessThanOrEqual(latest.count, 5)
            if let newest = latest.first {
                XCTAssertEqual(newest.responseBody.bytes.count, 256)
            }
            reads += 1
        }
        flush(writer)
        XCTAssertEqual(try reader.count(), total)
        XCTAssertEqual(writer.statistics, CaptureStatistics(flowsWritten: total))
        XCTAssertGreaterThan(reads, 5)
        XCTAssertGreaterThan(intermediateCounts.count, 1, "the reader never saw writes in progress")
        writer.close()
    }
}
