import LinearRegex
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Rules
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// A rewrite that takes long gives its pool thread back after each turn: 20 bodies whose pattern
/// makes replacing quadratic (`b+c|b` over runs of b) each held a thread for their whole 5 s
/// limit, and every map-local file and every other client's rewrite waited 25 s behind them.
final class RewriteFairnessTests: XCTestCase {
    private func held(_ text: String) -> HeldBody {
        var held = HeldBody(limit: 1 << 20)
        _ = held.append(ByteBuffer(string: text))
        return held
    }

    /// Completion flags read on the test thread after the embedded loop ran.
    private final class Done: @unchecked Sendable { var long = false; var short = false }

    /// With the pool's work queued in order, a long rewrite runs one turn, then queues again
    /// behind the short one that came after it: the short one is done first.
    func testALongRewriteQueuesAgainBehindWorkThatCameAfterIt() throws {
        let work = DeferredWork()
        let loop = EmbeddedEventLoop()
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        let quadratic = try TextReplacement(pattern: .regex(LinearRegex("b+c|b")), replacement: "x")
        let cancellation = WorkCancellation()
        let done = Done()
        let long = ExchangeRewriter.rewrite(held(String(repeating: "b", count: 300_000)), headers: headers,
                                            replacements: [quadratic], side: "response", limit: 1 << 20,
                                            cancellation: cancellation, work: work, on: loop)
        long.whenComplete { _ in done.long = true }
        let short = ExchangeRewriter.rewrite(held("abcb"), headers: headers, replacements: [quadratic], side: "response",
                                             limit: 1 << 20, work: work, on: loop)
        short.whenComplete { _ in done.short = true }
        XCTAssertEqual(work.pendingCount, 2)

        work.releaseNext()  // the long one's first turn
        loop.run()
        XCTAssertFalse(done.long, "one turn does not finish a quadratic replacement of 300 KB")
        XCTAssertEqual(work.pendingCount, 2, "its next turn is queued behind the short rewrite")
        work.releaseNext()  // the short one
        loop.run()
        XCTAssertTrue(done.short)
        XCTAssertEqual(String(decoding: try short.wait().body, as: UTF8.self), "axx")
        XCTAssertFalse(done.long)

        cancellation.cancel()  // its client leaves: the next turn stops at once
        while work.pendingCount > 0 {
            work.releaseNext()
            loop.run()
        }
        XCTAssertThrowsError(try long.wait()) { XCTAssertTrue($0 is WorkCancellation.Cancelled, "\($0)") }
    }
}
