import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// A large body spooled while it is captured (`BodyFileSpool`) is written off the event loop,
/// then claimed by the writer under its content name: readers see it as any other body, a spool
/// never claimed leaves no file, and one that cannot write loses only that body.
final class BodyFileSpoolTests: XCTestCase {
    private let block = CapturedBody.blockSize

    private func spoolFiles(_ store: BodyFileStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.spoolDirectory)) ?? []).sorted()
    }

    private func column(_ name: String, id: Int64, _ repository: TrafficRepository) throws -> DatabaseValue {
        try repository.database.pool.read { db in
            try DatabaseValue.fetchOne(db, sql: "SELECT \(name) FROM flows WHERE id = ?", arguments: [id]) ?? .null
        }
    }

    func testASpooledBodyIsStoredUnderItsContentNameAndReadsBackWhole() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3 + 999, seed: 1)
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody.spooled(bytes, into: store.makeSpool())
        XCTAssertEqual(flow.responseBody.heldCount, 0, "nothing of it left in memory")
        XCTAssertEqual(flow.capturedBodyBytes, flow.requestBody.heldCount)
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(String.fromDatabaseValue(try column("response_body_file", id: id, repository)), contentName(bytes))
        XCTAssertTrue(try column("response_body", id: id, repository).isNull)
        let read = try XCTUnwrap(repository.flow(id: id))
        XCTAssertEqual(read.responseBody.bytes, bytes)
        XCTAssertEqual(read.responseBody.size, Int64(bytes.count))
        XCTAssertFalse(read.responseBody.truncated)
        XCTAssertEqual(spoolFiles(store), [], "the spool file was moved into place")
        let path = store.path(of: contentName(bytes))
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600)
    }

    func testBytesStoredAlreadyAreKeptOnce() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let bytes = bodyPattern(block * 2 + 5, seed: 2)
        var inMemory = Samples.flow(1)
        inMemory.responseBody = CapturedBody(bytes: bytes, size: Int64(bytes.count))
        var spooled = Samples.flow(2)
        spooled.requestBody = CapturedBody.spooled(bytes, into: store.makeSpool())
        let ids = try repository.insert([inMemory, spooled])
        XCTAssertEqual(String.fromDatabaseValue(try column("request_body_file", id: ids[1], repository)), contentName(bytes))
        XCTAssertEqual(try repository.flow(id: ids[1])?.requestBody.bytes, bytes)
        XCTAssertEqual(spoolFiles(store), [])
        try repository.delete(ids: [ids[0]])
        XCTAssertEqual(try repository.flow(id: ids[1])?.requestBody.bytes, bytes, "still named by the other flow")
        try repository.delete(ids: [ids[1]])
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path(of: contentName(bytes))))
    }

    /// A flow that never reaches the writer (dropped, or the proxy stopping) takes its spool file
    /// with it.
    func testASpoolNeverClaimedRemovesItsFile() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        var path = ""
        do {
            let spool = store.makeSpool()
            path = spool.temporaryPath
            var body = CapturedBody.spooled(bodyPattern(block * 2, seed: 3), into: spool, finish: false)
            XCTAssertEqual(spool.contents().count, block * 2)
            XCTAssertTrue(FileManager.default.fileExists(atPath: path))
            body.bytes = Data()  // as the capture queue strips a body it has no room for
        }
        // A write's closure lets the spool go just after the write it waited for: once the
        // queue has run everything before this, the last reference is gone.
        BodyFileSpool.queue.sync {}
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(spoolFiles(store), [])
    }

    /// When the spool cannot write (a file where the store's folder should be), that body is
    /// stored empty and marked truncated, its size kept; the flow and its other parts are kept.
    func testASpoolThatCannotWriteLosesOnlyItsBody() throws {
        let repository = try makeRepository()
        try Data().write(to: URL(fileURLWithPath: repository.database.bodyFiles.directory))
        var flow = Samples.flow(1)
        flow.requestBody = CapturedBody(bytes: Data("kept".utf8), size: 4)
        let bytes = bodyPattern(block * 2, seed: 4)
        flow.responseBody = CapturedBody.spooled(bytes, into: repository.database.bodyFiles.makeSpool())
        let id = try XCTUnwrap(repository.insert([flow]).first)
        let read = try XCTUnwrap(repository.flow(id: id))
        XCTAssertEqual(read.responseBody.bytes, Data())
        XCTAssertTrue(read.responseBody.truncated)
        XCTAssertEqual(read.responseBody.size, Int64(bytes.count))
        XCTAssertEqual(read.requestBody, flow.requestBody)
        XCTAssertEqual(read.path, flow.path)
    }

    /// Blocks waiting to be written are bounded across every spool: past the bound a spool
    /// refuses (its body is kept as far as it got); once the writes catch up, spools take blocks
    /// again.
    func testSpoolsRefuseBlocksBeyondThePendingBound() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let piece = bodyPattern(block, seed: 5)  // one buffer handed many times: counted, not copied
        let first = store.makeSpool(), second = store.makeSpool()
        BodyFileSpool.queue.suspend()
        var suspended = true
        defer { if suspended { BodyFileSpool.queue.resume() } }
        for index in 0..<(BodyFileSpool.maxPendingBytes / block) {
            XCTAssertTrue(first.append(piece), "block \(index) is within the bound")
        }
        XCTAssertFalse(first.append(piece))
        XCTAssertFalse(second.append(piece), "the bound is shared")
        BodyFileSpool.queue.resume()
        suspended = false
        XCTAssertEqual(first.contents().count, BodyFileSpool.maxPendingBytes)
        XCTAssertFalse(first.append(piece), "a spool that refused once stays refused: its body would have a gap")
        XCTAssertFalse(second.append(piece))
        let third = store.makeSpool()
        XCTAssertTrue(third.append(piece), "the writes caught up")
        XCTAssertEqual(third.contents(), piece)
    }

    /// Spool files of a process that died are removed when a proxy opens the store; those of
    /// running processes, and other files, are left.
    func testAbandonedSpoolFilesAreRemovedAtStart() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        XCTAssertTrue(store.makeSpoolDirectory())
        let dead = "2147483646-7.partial", deadLink = "2147483646-ab12-8-twin.partial"
        let own = BodyFileSpool.namePrefix + "1.partial", running = "1-3.partial", other = "notes.txt"
        // An earlier process that had this pid (pid 1 in a container): its files are not ours.
        let samePidBefore = "\(getpid())-0-1.partial", samePidLink = "\(getpid())-0-2-twin.partial"
        for name in [dead, deadLink, own, running, other, samePidBefore, samePidLink] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: store.spoolDirectory + "/" + name))
        }
        store.removeAbandonedSpools()
        XCTAssertEqual(spoolFiles(store), [own, running, other].sorted())
    }
}
