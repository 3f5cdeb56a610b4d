import CaptureTestSupport
import Foundation
import GRDB
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

/// Body files are named by a fast hash (XXH3-128) that anyone on the network could make collide,
/// so a body shares a file only when its bytes are the same: a body whose name is taken by other
/// bytes is stored under another name and reads back as itself, and the other file is untouched.
final class BodyFileNamingTests: XCTestCase {
    private static let large = BodyFileStore.threshold + 1_234

    private static func bytes(_ count: Int, seed: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ seed &+ $0 >> 10) })
    }

    private static func name(of bytes: Data) -> String {
        let hasher = BodyContentHasher()
        hasher.update(bytes)
        return hasher.name()
    }

    private func fileColumn(_ column: String, id: Int64, _ repository: TrafficRepository) throws -> String? {
        try repository.database.pool.read { db in
            try String.fetchOne(db, sql: "SELECT \(column) FROM flows WHERE id = ?", arguments: [id])
        }
    }

    /// Puts `bytes` in the store under `name`, as an earlier flow with other bytes of that name
    /// would have.
    private func occupy(_ name: String, with bytes: Data, in store: BodyFileStore) throws -> String {
        let path = store.path(of: name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    func testNamesAreTheXXH3Of128BitsInCanonicalHex() {
        XCTAssertEqual(Self.name(of: Data()), "99aa06d3014798d86001c324468d497f")  // xxHash's published value
        XCTAssertEqual(Self.name(of: Data("abc".utf8)), "06b05ab6733a618578af5f94892f3950")
        let bytes = Self.bytes(300_001, seed: 1)
        let inSteps = BodyContentHasher()
        for start in stride(from: 0, to: bytes.count, by: 7_777) {
            inSteps.update(bytes[start..<min(start + 7_777, bytes.count)])
        }
        XCTAssertEqual(inSteps.name(), Self.name(of: bytes), "fed in steps or whole, one name")
        XCTAssertNotEqual(Self.name(of: bytes), Self.name(of: bytes.dropLast()))
    }

    func testANameTakenByOtherBytesGivesABodyInMemoryTheNextName() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let body = Self.bytes(Self.large, seed: 2), squatter = Self.bytes(Self.large, seed: 3)
        let name = Self.name(of: body)
        let taken = try occupy(name, with: squatter, in: store)
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody(bytes: body, size: Int64(body.count))
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try fileColumn("response_body_file", id: id, repository), name + "-1")
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: taken)), squatter, "the other file is untouched")
    }

    func testANameTakenByOtherBytesGivesASpooledBodyTheNextName() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let body = Self.bytes(CapturedBody.blockSize * 2 + 9, seed: 4)
        let name = Self.name(of: body)
        // The same length, one byte different at the very end: only a full comparison tells.
        var lastByteDiffers = body
        lastByteDiffers[lastByteDiffers.count - 1] ^= 0xFF
        _ = try occupy(name, with: lastByteDiffers, in: store)
        _ = try occupy(name + "-1", with: body.prefix(body.count - 1), in: store)  // cut one byte short
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody.spooled(body, into: store.makeSpool())
        let id = try XCTUnwrap(repository.insert([flow]).first)
        XCTAssertEqual(try fileColumn("response_body_file", id: id, repository), name + "-2")
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
        let spooled = (try? FileManager.default.contentsOfDirectory(atPath: store.spoolDirectory)) ?? []
        XCTAssertEqual(spooled, [], "the spool file was moved into place")
    }

    /// The same bytes under a taken name's suffix are found and shared, in memory or spooled.
    func testTheSameBytesShareTheFileTheyMatchPastACollision() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let body = Self.bytes(CapturedBody.blockSize * 2 + 9, seed: 5)
        let name = Self.name(of: body)
        _ = try occupy(name, with: Self.bytes(body.count, seed: 6), in: store)
        var inMemory = Samples.flow(1), spooled = Samples.flow(2)
        inMemory.responseBody = CapturedBody(bytes: body, size: Int64(body.count))
        spooled.requestBody = CapturedBody.spooled(body, into: store.makeSpool())
        let ids = try repository.insert([inMemory, spooled])
        XCTAssertEqual(try fileColumn("response_body_file", id: ids[0], repository), name + "-1")
        XCTAssertEqual(try fileColumn("request_body_file", id: ids[1], repository), name + "-1")
        XCTAssertEqual(try repository.flow(id: ids[1])?.requestBody.bytes, body)
    }

    /// Every suffixed name taken too: the body gets a name of its own rather than being lost.
    func testEveryCandidateTakenStillStoresTheBody() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let body = Self.bytes(Self.large, seed: 7)
        let name = Self.name(of: body)
        let candidates = BodyFileStore.candidates(for: name)
        XCTAssertEqual(candidates.count, 9)
        for taken in candidates.dropLast() {
            _ = try occupy(taken, with: Data("other".utf8), in: store)
        }
        var flow = Samples.flow(1)
        flow.responseBody = CapturedBody.spooled(body, into: store.makeSpool())
        let id = try XCTUnwrap(repository.insert([flow]).first)
        let stored = try XCTUnwrap(fileColumn("response_body_file", id: id, repository))
        XCTAssertFalse(candidates.dropLast().contains(stored))
        XCTAssertTrue(stored.hasPrefix(name + "-"))
        XCTAssertTrue(BodyFileStore.isValidName(stored))
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
    }

    /// Captures written before the names changed keep reading their SHA-256-named files.
    func testAFileNamedBySHA256BeforeStillReads() throws {
        let repository = try makeRepository()
        let store = repository.database.bodyFiles
        let id = try XCTUnwrap(repository.insert([Samples.flow(1)]).first)
        let legacy = String(repeating: "ab12", count: 16), body = Self.bytes(Self.large, seed: 8)
        _ = try occupy(legacy, with: body, in: store)
        try repository.database.pool.write { db in
            try db.execute(sql: "UPDATE flows SET response_body_file = ? WHERE id = ?", arguments: [legacy, id])
        }
        XCTAssertEqual(try repository.flow(id: id)?.responseBody.bytes, body)
        try repository.delete(ids: [id])
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path(of: legacy)), "removed with its last row")
    }

    func testOnlyNamesTheStoreMakesAreValid() {
        let hex32 = "0123456789abcdef0123456789abcdef"
        for valid in [hex32, hex32 + "-1", hex32 + "-7", hex32 + "-" + String(repeating: "f", count: 16),
                      String(repeating: "0", count: 64)] {
            XCTAssertTrue(BodyFileStore.isValidName(valid), valid)
        }
        for invalid in ["", hex32.dropLast() + "", hex32.uppercased(), hex32 + "-", hex32 + "1",
                        hex32 + "-" + String(repeating: "f", count: 17), hex32 + "-../x", hex32 + "-1/2",
                        hex32 + "-g", "../" + hex32, String(repeating: "0", count: 63), String(repeating: "0", count: 65)] {
            XCTAssertFalse(BodyFileStore.isValidName(invalid), invalid)
        }
    }
}
