import CaptureTestSupport
import Dispatch
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// Closing the writer (a clean shutdown) folds the write-ahead log into the database file, so
/// the capture is one self-contained file; a reader that holds the log back delays the close
/// by a bounded wait only.
final class CheckpointAtCloseTests: XCTestCase {
    private func walSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
    }

    /// The flows in the database file alone: a copy of it without its `-wal`.
    private func flowsInTheMainFile(_ path: String) throws -> Int {
        let copy = try makeTemporaryDirectory().file("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return try TrafficRepository(database: try TrafficDatabase.openReadOnly(path: copy)).count()
    }

    func testCloseFoldsTheLogIntoTheFile() throws {
        let path = try makeTemporaryDirectory().file("capture.sqlite")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let writer = CaptureWriter(repository: repository, limits: .init(maxBatchSize: 64),
                                   logger: CapturingLogHandler().logger)
        for index in 0..<300 { writer.record(Samples.flow(index, bodyBytes: 2_000)) }
        flush(writer)
        XCTAssertGreaterThan(walSize(path), 0, "the flows are in the log before the close")
        writer.close()
        XCTAssertEqual(walSize(path), 0)
        XCTAssertEqual(try flowsInTheMainFile(path), 300)
    }

    /// A reader holding an old snapshot keeps the log from being emptied: the close waits a
    /// bounded time, says so in the log, and loses nothing (the log stays for the next opener).
    func testAReaderHoldingTheLogDelaysTheCloseABoundedTime() throws {
        let path = try makeTemporaryDirectory().file("capture.sqlite")
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        let log = CapturingLogHandler()
        let writer = CaptureWriter(repository: repository, logger: log.logger)
        writer.record(Samples.flow(1))
        flush(writer)
        let reader = try TrafficDatabase.openReadOnly(path: path)
        let reading = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? reader.pool.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM flows")
                reading.signal()
                _ = done.wait(timeout: .now() + 30)
            }
        }
        XCTAssertEqual(reading.wait(timeout: .now() + 10), .success)
        writer.record(Samples.flow(2))  // a frame the reader's snapshot does not have
        writer.close()
        done.signal()
        XCTAssertTrue(log.entries.contains { $0.message.contains("write-ahead log was not folded") }, "\(log.entries.map(\.message))")
        XCTAssertEqual(try repository.count(), 2)
    }
}
