import CaptureTestSupport
import FlowFilter
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// Bodies of `BodyFileStore.threshold` bytes and more live in files beside the database: every
/// reader sees them as before, the same bytes are kept once, and a file goes with the last flow
/// naming it.
final class BodyFileStoreTests: XCTestCase {
    private static let large = BodyFileStore.threshold + 4_321

    private static func flow(_ index: Int, body: Data) -> Flow {
        var flow = Samples.flow(index)
        flow.responseBody = CapturedBody(bytes: body, size: Int64(body.count))
        return flow
    }

    private static func bytes(_ count: Int, seed: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &+ $0 >> 9) })
    }

    /// The files under the store's directory, by name.
    private func files(_ repository: TrafficRepository) -> [String] {
        let directory = repository.database.bodyFiles.directory
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return shards.flatMap { shard in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + shard)) ?? [])
        }.sorted()
    }

    private func column(_ name: String, id: Int64, _ repository: TrafficRepository) throws -> DatabaseValue {
        try repository.database.pool.read { db in
            try DatabaseValue.fetchOne(db, sql: "SELECT \(name) FROM flows WHERE id = ?", arguments: [id]) ?? .null
        }
    }

    func testALargeBodyIsAFileNamedByItsHashAndReadsBackWhole() throws {
        let repository = try makeRepository()
        let body = Self.bytes(Self.large, seed: 1)
        let ids = try repository.insert([Self.flow(1, body: body), Samples.flow(2, bodyBytes: 100)])
        XCTAssertTrue(try column("response_body", id: ids[0], repository).isNull, "the BLOB stays NULL")
        let name = try XCTUnwrap(String.fromDatabaseValue(try column("response_body_file", id: ids[0], repository)))
        XCTAssertEqual(files(repository), [name])
        XCTAssertTrue(BodyFileStore.isValidName(name))
        // Decrypted bodies: private whatever the umask, like the database itself.
        let directory = repository.database.bodyFiles.directory
        for (path, mode) in [(directory, 0o700), ("\(directory)/\(name.prefix(2))", 0o700),
                             ("\(directory)/\(name.prefix(2))/\(name)", 0o600)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, mode, path)
        }
        XCTAssertTrue(try column("response_body_file", id: ids[1], repository).isNull, "a small body stays inline")
        let read = try XCTUnwrap(repository.flow(id: ids[0]))
        XCTAssertEqual(read.responseBody.bytes, body)
        XCTAssertEqual(read.responseBody.size, Int64(body.count))
        XCTAssertFalse(read.responseBody.truncated)
        XCTAssertEqual(try repository.flow(id: ids[1])?.responseBody.bytes.count, 100)
        // The database holds none of it.
        let databaseSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: repository.database.path)[.size] as? Int)
        XCTAssertLessThan(databaseSize, BodyFileStore.threshold)
    }

    func testABodyOneByteBelowTheThresholdStaysInTheDatabase() throws {
        let repository = try makeRepository()
        let id = try XCTUnwrap(repository.insert([Self.flow(1, body: Self.bytes(BodyFileStore.threshold - 1, seed: 2))]).first)
        XCTAssertFalse(try column("response_body", id: id, repository).isNull)
        XCTAssertEqual(files(repository), [])
    }

    func testTheSameBytesAreKeptOnceAndGoWithTheLastFlowNamingThem() throws {
        let repository = try makeRepository()
        let shared = Self.bytes(Self.large, seed: 3), other = Self.bytes(Self.large, seed: 4)
        var both = Self.flow(3, body: other)
        both.requestBody = CapturedBody(bytes: shared, size: Int64(shared.count))  // the same bytes as a request
        let ids = try repository.insert([Self.flow(1, body: shared), Self.flow(2, body: shared), both])
        XCTAssertEqual(files(repository).count, 2)
        try repository.delete(ids: [ids[0]])
        XCTAssertEqual(files(repository).count, 2, "two flows still name the shared file")
        try repository.delete(ids: [ids[1]])
        XCTAssertEqual(files(repository).count, 2, "the request of the third names it")
        XCTAssertEqual(try repository.flow(id: ids[2])?.requestBody.bytes, shared)
        try repository.delete(ids: [ids[2]])
        XCTAssertEqual(files(repository), [])
    }

    func testDeletingEveryFlowRemovesEveryFile() throws {
        let repository = try makeRepository()
        _ = try repository.insert((1...3).map { Self.flow($0, body: Self.bytes(Self.large, seed: $0)) })
        XCTAssertEqual(files(repository).count, 3)
        XCTAssertEqual(try repository.deleteAllFlows(), 3)
        XCTAssertEqual(files(repository), [])
        // And the store still takes new bodies afterwards.
        let id = try XCTUnwrap(repository.insert([Self.flow(9, body: Self.bytes(Self.large, seed: 9))]).first)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, Self.bytes(Self.large, seed: 9))
    }

    /// A file removed by hand loses that body only: it reads as empty and truncated, its size
    /// still known; the flow and every other flow read as before.
    func testAMissingFileLeavesItsBodyEmptyAndTruncated() throws {
        let repository = try makeRepository()
        let ids = try repository.insert([Self.flow(1, body: Self.bytes(Self.large, seed: 5)),
                                         Self.flow(2, body: Self.bytes(Self.large, seed: 6))])
        let name = try XCTUnwrap(String.fromDatabaseValue(try column("response_body_file", id: ids[0], repository)))
        let directory = repository.database.bodyFiles.directory
        try FileManager.default.removeItem(atPath: "\(directory)/\(name.prefix(2))/\(name)")
        let read = try XCTUnwrap(repository.flow(id: ids[0]))
        XCTAssertEqual(read.responseBody.bytes, Data())
        XCTAssertTrue(read.responseBody.truncated)
        XCTAssertEqual(read.responseBody.size, Int64(Self.large))
        XCTAssertEqual(read.path, "/item/1")
        XCTAssertEqual(try repository.flow(id: ids[1])?.responseBody.bytes, Self.bytes(Self.large, seed: 6))
    }

    /// A row edited to name another file (a path, not a hash) reads nothing from it.
    func testARowNamingAPathOutsideTheStoreReadsNothing() throws {
        let directory = try makeTemporaryDirectory()
        let secret = directory.file("secret")
        try Data("do not show".utf8).write(to: URL(fileURLWithPath: secret))
        let repository = try directory.makeRepository()
        let id = try XCTUnwrap(repository.insert([Self.flow(1, body: Self.bytes(Self.large, seed: 7))]).first)
        for name in ["../../secret", "../secret", secret, String(repeating: "A", count: 64), String(repeating: "0", count: 63)] {
            try repository.database.pool.write { db in
                try db.execute(sql: "UPDATE flows SET response_body_file = ? WHERE id = ?", arguments: [name, id])
            }
            let read = try XCTUnwrap(repository.flow(id: id), name)
            XCTAssertEqual(read.responseBody.bytes, Data(), name)
            try repository.delete(ids: [])  // nothing to delete, nothing removed
        }
        try repository.delete(ids: [id])
        XCTAssertTrue(FileManager.default.fileExists(atPath: secret), "deleting the row never touches the named path")
    }

    /// Filters that read bodies, exports and the read-only opener (another process: the TUI,
    /// `proxyapp flows`) see file bodies; list rows never read them.
    func testFiltersExportsAndReadOnlyReadersSeeFileBodies() throws {
        let directory = try makeTemporaryDirectory()
        let repository = try directory.makeRepository()
        var body = Self.bytes(Self.large, seed: 8)
        body.append(contentsOf: Array("needle-in-a-large-body".utf8))
        let ids = try repository.insert([Self.flow(1, body: body), Self.flow(2, body: Self.bytes(Self.large, seed: 9))])
        let query = FlowQuery(filter: try FlowFilter(parsing: "~bs needle-in-a-large-body"))
        XCTAssertEqual(try repository.matchingFlowIDs(in: ids[0]...ids[1], query: query), [ids[0]])
        XCTAssertEqual(try repository.matchingFlowIDs(among: ids, query: query), [ids[0]])
        var exported: [Flow] = []
        try repository.forEachFlow(matching: query) { exported.append($0) }
        XCTAssertEqual(exported.map(\.responseBody.bytes), [body])
        XCTAssertEqual(try repository.listedFlows(ids: ids).map(\.responseBody.bytes), [Data(), Data()])
        XCTAssertEqual(try repository.listedFlows(ids: ids).map(\.responseBody.size), [Int64(body.count), Int64(Self.large)])
        let reader = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: repository.database.path))
        XCTAssertEqual(try reader.flow(id: ids[0])?.responseBody.bytes, body)
        XCTAssertEqual(try reader.latestFlows(limit: 1).first?.responseBody.bytes, Self.bytes(Self.large, seed: 9))
    }

    /// When the store's directory cannot be made, a large body stays in its BLOB column: the
    /// capture loses nothing.
    func testABodyTheStoreCannotTakeStaysInTheDatabase() throws {
        let directory = try makeTemporaryDirectory()
        let repository = try directory.makeRepository()
        try Data().write(to: URL(fileURLWithPath: repository.database.bodyFiles.directory))  // a file in the way
        let body = Self.bytes(Self.large * 2, seed: 10)
        let id = try XCTUnwrap(repository.insert([Self.flow(1, body: body)]).first)
        XCTAssertTrue(try column("response_body_file", id: id, repository).isNull)
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
    }

    /// A body captured in blocks hashes and writes block by block: the same bytes in one piece
    /// name the same file.
    func testABodyInBlocksNamesTheSameFileAsTheSameBytesInOnePiece() throws {
        let repository = try makeRepository()
        let bytes = Self.bytes(CapturedBody.blockSize * 2 + 77, seed: 11)
        var blocks = CapturedBody(size: Int64(bytes.count))
        for start in stride(from: 0, to: bytes.count, by: 65_536) {
            bytes[start..<min(start + 65_536, bytes.count)].withUnsafeBytes { blocks.append($0) }
        }
        XCTAssertGreaterThan(blocks.parts.count, 1)
        var inBlocks = Samples.flow(1)
        inBlocks.responseBody = blocks
        let ids = try repository.insert([inBlocks, Self.flow(2, body: bytes)])
        XCTAssertEqual(files(repository).count, 1)
        XCTAssertEqual(try repository.flow(id: ids[0])?.responseBody.bytes, bytes)
    }
}
