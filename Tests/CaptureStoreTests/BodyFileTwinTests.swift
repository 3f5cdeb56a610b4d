import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// A large body captured again is checked against its stored twin instead of written
/// (`BodyFileSpool`, `BodyTwinIndex`): the spool links the stored file and compares each block.
/// Whatever the twin does meanwhile (differs at some byte, is longer or shorter, is removed, is
/// cut short or replaced by hand), the body stored is exactly the bytes that arrived.
final class BodyFileTwinTests: XCTestCase {
    private let block = CapturedBody.blockSize

    private func identity(_ path: String) -> [UInt64]? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    private func storedFiles(_ store: BodyFileStore) -> [String] {
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: store.directory)) ?? []
        return shards.filter { $0.count == 2 }.flatMap { shard in
            (try? FileManager.default.contentsOfDirectory(atPath: store.directory + "/" + shard)) ?? []
        }.sorted()
    }

    private func responseFile(_ id: Int64, _ repository: TrafficRepository) throws -> String? {
        try repository.database.pool.read { db in
            try String.fetchOne(db, sql: "SELECT response_body_file FROM flows WHERE id = ?", arguments: [id])
        }
    }

    /// Stores `bytes` as a flow's spooled response body and returns the flow's id.
    @discardableResult
    private func store(_ bytes: Data, _ repository: TrafficRepository, spool: BodyFileSpool? = nil) throws -> Int64 {
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody.spooled(bytes, into: spool ?? repository.database.bodyFiles.makeSpool())
        return try XCTUnwrap(repository.insert([flow]).first)
    }

    /// Stores `first`, then captures `second`, checks it reads back whole under its own name,
    /// and returns the bytes its spool found in the twin.
    @discardableResult
    private func storeAfter(_ first: Data, _ second: Data, _ repository: TrafficRepository) throws -> Int {
        try store(first, repository)
        let spool = repository.database.bodyFiles.makeSpool()
        let id = try store(second, repository, spool: spool)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, second)
        XCTAssertEqual(try responseFile(id, repository), contentName(second))
        return spool.bytesTakenFromTwin()
    }

    func testTheSameBodyAgainIsCheckedAgainstItsFileNotWritten() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3 + 999, seed: 1)
        let first = try store(bytes, repository)
        let name = contentName(bytes)
        let spool = files.makeSpool()
        var body = CapturedBody.spooled(bytes, into: spool, finish: false)
        BodyFileSpool.queue.sync {}
        XCTAssertEqual(identity(spool.temporaryPath), identity(files.path(of: name)), "the spool file is the stored file")
        XCTAssertEqual(spool.contents(upTo: 10), bytes.prefix(10))
        body.finishSpooling()
        var flow = Samples.flow(2)
        flow.responseBody = body
        let second = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try responseFile(second, repository), name)
        XCTAssertEqual(try repository.flow(id: second)?.responseBody.bytes, bytes)
        XCTAssertEqual(try repository.flow(id: first)?.responseBody.bytes, bytes)
        XCTAssertEqual(storedFiles(files), [name])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.spoolDirectory), [])
    }

    func testABodyThatPartsFromItsTwinMidwayIsStoredAsItArrived() throws {
        let repository = try makeRepository()
        let original = bodyPattern(block * 3 + 999, seed: 2)
        var changed = original
        changed[block * 2 + 10] ^= 0xFF
        XCTAssertEqual(try storeAfter(original, changed, repository), block, "its second block came from the twin")
        XCTAssertEqual(storedFiles(repository.database.bodyFiles), [contentName(original), contentName(changed)].sorted())
        XCTAssertEqual(repository.database.bodyFiles.read(contentName(original)), original, "the twin is left as it was")
    }

    func testABodyThatDiffersWithinItsFirstBlockIsWrittenFromTheStart() throws {
        let repository = try makeRepository()
        let original = bodyPattern(block * 2, seed: 3)
        var changed = original
        changed[100_000] ^= 0x01
        XCTAssertEqual(try storeAfter(original, changed, repository), 0, "the first block did not match: no link")
    }

    func testABodyLongerThanItsTwinIsStoredWhole() throws {
        let repository = try makeRepository()
        let original = bodyPattern(block * 2 + 77, seed: 4)
        XCTAssertEqual(try storeAfter(original, original + bodyPattern(block + 5, seed: 9), repository), block,
                       "its third block runs past the twin's end")
        XCTAssertEqual(repository.database.bodyFiles.read(contentName(original)), original)
    }

    func testABodyThatIsTheStartOfItsTwinIsStoredAsItself() throws {
        let repository = try makeRepository()
        let original = bodyPattern(block * 3, seed: 5)
        XCTAssertEqual(try storeAfter(original, original.prefix(block * 2 + 3), repository), block + 3)
        XCTAssertEqual(try storeAfter(original, original.prefix(block * 2), repository), block)
    }

    /// The twin's last flow deleted while the body is checked against it: the stored file goes,
    /// and the claim puts the body back under its name from the spool's link.
    func testATwinRemovedDuringTheCheckIsPutBack() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3, seed: 6)
        let first = try store(bytes, repository)
        let spool = files.makeSpool()
        var body = CapturedBody.spooled(bytes, into: spool, finish: false)
        BodyFileSpool.queue.sync {}
        XCTAssertEqual(spool.bytesTakenFromTwin(), block * 2)
        try repository.delete(ids: [first])
        XCTAssertEqual(storedFiles(files), [], "no flow named the file")
        body.finishSpooling()
        var flow = Samples.flow(2)
        flow.responseBody = body
        let second = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try repository.flow(id: second)?.responseBody.bytes, bytes)
        XCTAssertEqual(storedFiles(files), [contentName(bytes)])
    }

    func testATwinGoneBeforeTheBodyArrivesIsNotUsed() throws {
        let repository = try makeRepository()
        let bytes = bodyPattern(block * 2 + 1, seed: 7)
        let first = try store(bytes, repository)
        try repository.delete(ids: [first])
        let second = try store(bytes, repository)
        XCTAssertEqual(try repository.flow(id: second)?.responseBody.bytes, bytes)
        XCTAssertEqual(storedFiles(repository.database.bodyFiles), [contentName(bytes)])
    }

    /// Descriptors run out while a body is checked against its twin: the spool can neither read
    /// the twin nor copy its start to a file of its own. Whether the rest matches or parts from
    /// the twin, the body is given up (its flow kept, the body marked truncated), the stored
    /// twin is never written to, and once descriptors are back the next copy is checked again.
    func testDescriptorsRunningOutDuringATwinCheckNeverTouchTheStoredTwin() throws {
        for parts in [false, true] {
            let repository = try makeRepository()
            let files = repository.database.bodyFiles
            let bytes = bodyPattern(block * 3 + 999, seed: 12)
            let first = try store(bytes, repository)
            let name = contentName(bytes)
            let twin = identity(files.path(of: name))
            var arriving = bytes
            if parts { arriving[block * 2 + 5] ^= 0xFF }
            let spool = files.makeSpool()
            var body = CapturedBody.spooled(arriving.prefix(block * 2), into: spool, finish: false)
            XCTAssertEqual(spool.bytesTakenFromTwin(), block, "checking against the twin when descriptors ran out")
            XCTAssertEqual(identity(spool.temporaryPath), twin)
            let (exhausted, _) = DescriptorExhaustion.run {
                arriving[(block * 2)...].withUnsafeBytes { body.append($0) }
                body.finishSpooling()
                BodyFileSpool.queue.sync {}
            }
            XCTAssertTrue(exhausted, "no descriptor could be opened")
            var flow = Samples.flow(2)
            flow.responseBody = body
            let second = try XCTUnwrap(repository.insert([flow]).first, "the flow is kept")
            let stored = try XCTUnwrap(repository.flow(id: second))
            XCTAssertTrue(stored.responseBody.truncated, "parts \(parts): the body could not be kept")
            XCTAssertNil(try responseFile(second, repository))
            XCTAssertEqual(identity(files.path(of: name)), twin, "the twin is the same file")
            XCTAssertEqual(files.read(name), bytes, "parts \(parts): the twin is unchanged")
            XCTAssertEqual(try repository.flow(id: first)?.responseBody.bytes, bytes)
            XCTAssertEqual(storedFiles(files), [name])
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.spoolDirectory), [],
                           "the spool left nothing behind")
            XCTAssertEqual(try storeAfter(bytes, bytes, repository), block * 2 + 999,
                           "descriptors back: the same body is checked against its twin again")
        }
    }

    /// Descriptors run out before the body's first block is written: nothing is linked or
    /// written, the twin stays as it was, and the index still leads the next copy to it.
    func testDescriptorsRunningOutBeforeTheFirstBlockLeaveTheTwinAlone() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 2 + 1, seed: 13)
        try store(bytes, repository)
        let spool = files.makeSpool()
        let (exhausted, body) = DescriptorExhaustion.run { () -> CapturedBody in
            let body = CapturedBody.spooled(bytes, into: spool)
            BodyFileSpool.queue.sync {}
            return body
        }
        XCTAssertTrue(exhausted)
        var flow = Samples.flow(2)
        flow.responseBody = body
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.truncated, true)
        XCTAssertEqual(spool.bytesTakenFromTwin(), 0)
        XCTAssertEqual(files.read(contentName(bytes)), bytes)
        XCTAssertEqual(try storeAfter(bytes, bytes, repository), block + 1)
    }

    /// A stored file cut short by hand: the bytes it still has are used, the rest written, and
    /// the body takes the next name since the file under its own holds other bytes.
    func testATwinCutShortByHandYieldsTheWholeBodyUnderAnotherName() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3, seed: 8)
        try store(bytes, repository)
        let name = contentName(bytes)
        XCTAssertEqual(truncate(files.path(of: name), off_t(block + 100)), 0)
        let second = try store(bytes, repository)
        XCTAssertEqual(try repository.flow(id: second)?.responseBody.bytes, bytes)
        XCTAssertEqual(try responseFile(second, repository), name + "-1")
    }

    /// A stored file replaced by a symbolic link (to the same bytes, or anywhere) is never linked
    /// nor read through.
    func testATwinReplacedByASymbolicLinkIsNotFollowed() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 2, seed: 10)
        try store(bytes, repository)
        let path = files.path(of: contentName(bytes))
        let elsewhere = files.directory + "/elsewhere"
        XCTAssertEqual(rename(path, elsewhere), 0)
        XCTAssertEqual(symlink(elsewhere, path), 0)
        let spool = files.makeSpool()
        var body = CapturedBody.spooled(bytes, into: spool, finish: false)
        BodyFileSpool.queue.sync {}
        XCTAssertNotEqual(identity(spool.temporaryPath), identity(elsewhere))
        XCTAssertNotEqual(identity(spool.temporaryPath), identity(path))
        body.finishSpooling()
        var flow = Samples.flow(2)
        flow.responseBody = body
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, bytes)
        XCTAssertEqual(try responseFile(id, repository), contentName(bytes) + "-1")
    }

    /// Many bodies with the same start, stored one after another, each read back as itself.
    func testBodiesSharingTheirStartEachKeepTheirBytes() throws {
        let repository = try makeRepository()
        let start = bodyPattern(block, seed: 11)
        let bodies = (0..<5).map { start + bodyPattern(block + $0 * 1000, seed: 20 + $0 % 2) }
        var ids: [Int64] = []
        for body in bodies + bodies.reversed() {
            ids.append(try store(body, repository))
        }
        for (id, body) in zip(ids, bodies + bodies.reversed()) {
            XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
        }
        XCTAssertEqual(storedFiles(repository.database.bodyFiles).count, 5)
    }

    /// The same body again before the writer has stored the first (a download repeated at once):
    /// the second spool links the first one's finished file, and both flows name one file.
    func testABodyRepeatedBeforeTheFirstIsStoredIsCheckedAgainstItsSpool() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3 + 5, seed: 14)
        let firstSpool = files.makeSpool(), secondSpool = files.makeSpool()
        var first = Samples.flow(1), second = Samples.flow(2)
        first.responseBody = CapturedBody.spooled(bytes, into: firstSpool)
        var body = CapturedBody.spooled(bytes, into: secondSpool, finish: false)
        XCTAssertEqual(secondSpool.bytesTakenFromTwin(), block * 2)
        XCTAssertEqual(identity(secondSpool.temporaryPath), identity(firstSpool.temporaryPath))
        body.finishSpooling()
        second.responseBody = body
        let ids = try repository.insert([first, second])
        for id in ids {
            XCTAssertEqual(try responseFile(id, repository), contentName(bytes))
            XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, bytes)
        }
        XCTAssertEqual(storedFiles(files), [contentName(bytes)])
    }

    /// The first flow dropped before it was stored (its spool file goes with it): the second,
    /// linked to that file, still stores the body.
    func testABodyRepeatedWhileTheFirstIsDroppedIsStillStored() throws {
        let repository = try makeRepository()
        let bytes = bodyPattern(block * 2 + 9, seed: 15)
        var secondSpool: BodyFileSpool?
        var body = CapturedBody()
        do {
            let firstSpool = repository.database.bodyFiles.makeSpool()
            var dropped = CapturedBody.spooled(bytes, into: firstSpool)
            secondSpool = repository.database.bodyFiles.makeSpool()
            body = CapturedBody.spooled(bytes, into: try XCTUnwrap(secondSpool), finish: false)
            XCTAssertEqual(secondSpool?.bytesTakenFromTwin(), block)
            dropped.bytes = Data()
        }
        BodyFileSpool.queue.sync {}
        body.finishSpooling()
        var flow = Samples.flow(1)
        flow.responseBody = body
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, bytes)
        XCTAssertEqual(try responseFile(id, repository), contentName(bytes))
    }

    /// A twin stored under a suffixed name (its hash collided) is removed while the body is
    /// checked, and other bytes take that name: the body takes the next name free, a valid one.
    func testASuffixedTwinWhoseNameIsRetakenGivesTheBodyAValidName() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 2, seed: 12)
        let name = contentName(bytes)
        let first = try store(bytes, repository)
        // As if the hash had collided: other bytes hold the name, the body holds `name-1`.
        try repository.database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET response_body_file = ? WHERE id = ?", arguments: [name + "-1", first])
        }
        XCTAssertEqual(rename(files.path(of: name), files.path(of: name + "-1")), 0)
        try Data("other bytes".utf8).write(to: URL(fileURLWithPath: files.path(of: name)))
        let key = bytes.prefix(BodyTwinIndex.prefixSize).withUnsafeBytes { BodyTwinIndex.key($0) }
        files.twins.record(name + "-1", for: key)
        let spool = files.makeSpool()
        var body = CapturedBody.spooled(bytes, into: spool, finish: false)
        XCTAssertEqual(spool.bytesTakenFromTwin(), block)
        XCTAssertEqual(unlink(files.path(of: name + "-1")), 0)
        try Data("more other bytes".utf8).write(to: URL(fileURLWithPath: files.path(of: name + "-1")))
        body.finishSpooling()
        var flow = Samples.flow(2)
        flow.responseBody = body
        let second = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try responseFile(second, repository), name + "-2")
        XCTAssertEqual(try repository.flow(id: second)?.responseBody.bytes, bytes)
    }

    /// A spool linked to its twin is not counted again in the store's size (retention's
    /// `--max-db-size` reads it).
    func testALinkedSpoolIsNotCountedTwice() throws {
        let repository = try makeRepository()
        let files = repository.database.bodyFiles
        let bytes = bodyPattern(block * 3, seed: 13)
        try store(bytes, repository)
        XCTAssertEqual(files.totalSize(), Int64(bytes.count))
        let spool = files.makeSpool()
        var body = CapturedBody.spooled(bytes, into: spool, finish: false)
        XCTAssertEqual(spool.bytesTakenFromTwin(), block * 2)
        XCTAssertEqual(files.totalSize(), Int64(bytes.count))
        XCTAssertEqual(spool.contents(upTo: 5), bytes.prefix(5))
        XCTAssertEqual(spool.contents(), bytes, "what the spool took, not more of the twin")
        body.bytes = Data()
    }

    /// A key forgotten and recorded again is one entry: it is evicted when it is the oldest, not
    /// when its earlier place comes up.
    func testAKeyForgottenAndRecordedAgainKeepsItsNewPlace() {
        let index = BodyTwinIndex()
        let capacity = UInt64(BodyTwinIndex.capacity)
        for key in 0..<capacity { index.record("name\(key)", for: key) }
        index.forget(0, naming: "name0")
        index.record("again", for: 0)
        for key in capacity..<(2 * capacity - 1) { index.record("name\(key)", for: key) }
        XCTAssertEqual(index.twin(for: 0)?.name, "again")
        XCTAssertEqual(index.count, BodyTwinIndex.capacity)
        index.record("last", for: 2 * capacity)
        XCTAssertNil(index.twin(for: 0))
    }

    func testTheIndexKeepsItsNewestEntries() {
        let index = BodyTwinIndex()
        for key in 0..<UInt64(BodyTwinIndex.capacity + 10) {
            index.record("name\(key)", for: key)
        }
        XCTAssertEqual(index.count, BodyTwinIndex.capacity)
        XCTAssertNil(index.twin(for: 9))
        XCTAssertEqual(index.twin(for: 10)?.name, "name10")
        XCTAssertEqual(index.twin(for: UInt64(BodyTwinIndex.capacity + 9))?.name, "name\(BodyTwinIndex.capacity + 9)")
        index.record("other", for: 10)
        XCTAssertEqual(index.twin(for: 10)?.name, "other", "a key recorded again names the newer file")
        index.forget(10, naming: "name10")
        XCTAssertEqual(index.twin(for: 10)?.name, "other", "forgotten only while it names the file that was gone")
        index.forget(10, naming: "other")
        XCTAssertNil(index.twin(for: 10))
    }
}
