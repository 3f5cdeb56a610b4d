import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

final class TrafficDatabaseTests: XCTestCase {
    /// A read-only open of a missing file says so, and creates nothing.
    func testOpenReadOnlyMissingFile() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("nothing.sqlite")
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .databaseNotFound(path: path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// A read-only open of a file that is not SQLite, or of an SQLite file without the capture
    /// schema, is refused with a clear error.
    func testOpenReadOnlyRejectsForeignFiles() throws {
        let directory = try makeTemporaryDirectory()
        let textPath = directory.file("notes.txt")
        try Data(String(repeating: "not a database\n", count: 100).utf8)
            .write(to: URL(fileURLWithPath: textPath))
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: textPath)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .notACaptureDatabase(path: textPath))
        }
        XCTAssertThrowsError(try TrafficDatabase(path: textPath)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .notACaptureDatabase(path: textPath))
        }
    }

    /// An SQLite file without the capture tables is not a capture database for a reader.
    func testOpenReadOnlyRejectsSQLiteWithoutTheSchema() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("other.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE notes (text TEXT)")
        }
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .notACaptureDatabase(path: path))
        }
    }

    /// A new capture gets `newCapturePageSize` pages; readers opening it do not change that.
    func testANewCaptureHasLargerPages() throws {
        let path = try makeTemporaryDirectory().file("new.sqlite")
        let database = try TrafficDatabase(path: path)
        XCTAssertEqual(try database.pool.read { try Int.fetchOne($0, sql: "PRAGMA page_size") }, 8192)
        let reader = try TrafficDatabase.openReadOnly(path: path)
        XCTAssertEqual(try reader.pool.read { try Int.fetchOne($0, sql: "PRAGMA page_size") }, 8192)
    }

    /// A file whose page size was set before (4 KiB, SQLite's default, as every capture before
    /// 8 KiB pages) keeps it, and takes flows as before.
    func testAnEarlierFileKeepsItsPageSize() throws {
        let path = try makeTemporaryDirectory().file("earlier.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
        let database = try TrafficDatabase(path: path)
        XCTAssertEqual(try database.pool.read { try Int.fetchOne($0, sql: "PRAGMA page_size") }, 4096)
        let repository = TrafficRepository(database: database)
        let ids = try repository.insert([Samples.flow(1, bodyBytes: 5000)])
        XCTAssertEqual(try repository.flow(id: ids[0])?.responseBody.bytes.count, 5000)
    }

    /// A file migrated by a newer store (a migration this build does not know) is refused by
    /// readers and by the writer, instead of being misread or written with an old schema.
    func testNewerSchemaIsRefused() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        do {
            let database = try TrafficDatabase(path: path)
            try database.pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
            }
        }
        XCTAssertThrowsError(try TrafficDatabase.openReadOnly(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .schemaTooNew(path: path))
        }
        XCTAssertThrowsError(try TrafficDatabase(path: path)) { error in
            XCTAssertEqual(error as? CaptureStoreError, .schemaTooNew(path: path))
        }
    }

    /// The read-write open fails (rather than creating directories) when the directory is
    /// missing.
    func testReadWriteOpenNeedsTheDirectory() throws {
        let directory = try makeTemporaryDirectory()
        XCTAssertThrowsError(try TrafficDatabase(path: directory.file("missing/capture.sqlite")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("missing")))
    }

    /// A read-only database reads what the writer stored, refuses writes with an error (no
    /// crash), and works again after the writer closed its connections.
    func testReadOnlyDatabaseReadsAndRefusesWrites() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        do {
            let writer = TrafficRepository(database: try TrafficDatabase(path: path))
            try writer.insert([Samples.flow(0), Samples.flow(1)])
        }
        let reader = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: path))
        XCTAssertTrue(reader.database.isReadOnly)
        XCTAssertEqual(try reader.count(), 2)
        XCTAssertEqual(try reader.latestFlows(limit: 1).first?.path, "/item/1")
        XCTAssertThrowsError(try reader.insert([Samples.flow(2)]))
        XCTAssertEqual(try reader.count(), 2)
    }

    /// `fileIsInPlace` notices the file being deleted or replaced.
    func testFileIsInPlaceNoticesDeletionAndReplacement() throws {
        let directory = try makeTemporaryDirectory()
        let path = directory.file("capture.sqlite")
        let database = try TrafficDatabase(path: path)
        XCTAssertTrue(database.fileIsInPlace)
        try FileManager.default.removeItem(atPath: path)
        XCTAssertFalse(database.fileIsInPlace)
        try Data("other".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertFalse(database.fileIsInPlace)
    }
}
