import Foundation
import LinearRegex
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Rules
import TestSupport
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// Blocking work for a client that has gone stops: map-local opens and chunk reads still
/// queued on the pool never run, and a rewrite stops before its next step.
final class AbandonedWorkTests: XCTestCase {
    private func folderWithBigFile() throws -> URL {
        let folder = try makeTemporaryDirectory().url
        try Data(repeating: 0x61, count: 300 << 10).write(to: folder.appendingPathComponent("big.bin"))
        return folder
    }

    private func harness(_ work: DeferredWork) throws -> EngineHarness {
        try EngineHarness(rules: """
            rules:
              - match: { host: m.test }
                map_local: { file: big.bin }
            """, rulesDirectory: try folderWithBigFile().path, blockingWork: work)
    }

    /// The client leaves while the file's open waits for a pool thread: the open never runs.
    func testQueuedOpenIsSkipped() throws {
        let work = DeferredWork()
        let harness = try harness(work)
        try harness.clientSends("GET http://m.test/big HTTP/1.1\r\nHost: m.test\r\n\r\n")
        XCTAssertEqual(work.pendingCount, 1, "the open is queued")
        try harness.client.close().wait()
        harness.loop.run()
        work.releaseNext()
        harness.loop.run()
        XCTAssertEqual(work.cancelled, 1)
        XCTAssertEqual(work.pendingCount, 0, "nothing was opened, so nothing is left to close")
        XCTAssertEqual(harness.sink.flows.first?.error, "client closed the connection before the exchange completed")
    }

    /// The client leaves while the next chunk waits for a pool thread: the read never runs, the
    /// file is closed, and no more reads are asked for.
    func testQueuedChunkReadIsSkipped() throws {
        let work = DeferredWork()
        let harness = try harness(work)
        try harness.clientSends("GET http://m.test/big HTTP/1.1\r\nHost: m.test\r\n\r\n")
        work.releaseNext()  // the open
        harness.loop.run()
        work.releaseNext()  // the first chunk
        harness.loop.run()
        XCTAssertEqual(work.pendingCount, 1, "the second chunk is queued")
        let requestedBefore = work.requested
        try harness.client.close().wait()
        harness.loop.run()
        while work.pendingCount > 0 { work.releaseNext() }  // the read, then the close
        harness.loop.run()
        XCTAssertEqual(work.cancelled, 1, "the queued read stopped at once")
        XCTAssertEqual(work.requested, requestedBefore + 1, "only the close was asked for after the client left")
    }

    private func held(_ text: String) -> HeldBody {
        var held = HeldBody(limit: 1 << 20)
        _ = held.append(ByteBuffer(string: text))
        return held
    }

    private func regex(_ pattern: String, _ replacement: String) throws -> TextReplacement {
        try TextReplacement(pattern: .regex(LinearRegex(pattern)), replacement: replacement)
    }

    /// A rewrite queued on the pool when its client leaves never runs.
    func testQueuedRewriteIsSkipped() throws {
        let work = DeferredWork()
        let loop = EmbeddedEventLoop()
        let cancellation = WorkCancellation()
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        let future = ExchangeRewriter.rewrite(
            held("aaaa"), headers: headers, replacements: [try regex("a", "b")], side: "response", limit: 1 << 20,
            cancellation: cancellation, work: work, on: loop)
        cancellation.cancel()
        work.releaseNext()
        loop.run()
        XCTAssertThrowsError(try future.wait()) { XCTAssertTrue($0 is WorkCancellation.Cancelled, "\($0)") }
        XCTAssertEqual(work.cancelled, 1)
    }

    /// A running rewrite asks before each replacement (and between a regex's matches) and stops
    /// when told to.
    func testRunningRewriteStopsBeforeItsNextStep() throws {
        final class Steps: @unchecked Sendable { var asked = 0 }
        let steps = Steps()
        let replacements = try (0..<5).map { _ in try regex("a", "b") }
        let outcome = BodyTextRewriter.rewrite(
            Array("aaaa".utf8), contentType: "text/plain", contentEncoding: nil, replacements: replacements,
            shouldStop: {
                steps.asked += 1
                return steps.asked > 2  // before decoding, before the first replacement: go on
            })
        XCTAssertEqual(outcome, .skipped("stopped"))
        XCTAssertEqual(steps.asked, 3, "it stopped at its first check inside the first replacement")
        let undisturbed = BodyTextRewriter.rewrite(
            Array("aaaa".utf8), contentType: "text/plain", contentEncoding: nil, replacements: replacements)
        XCTAssertEqual(undisturbed, .rewritten(Array("bbbb".utf8)))
    }
}
