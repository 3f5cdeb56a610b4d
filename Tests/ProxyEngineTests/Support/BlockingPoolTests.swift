import Dispatch
import NIOCore
import NIOPosix
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The blocking pool's shutdown never waits for work, and answers it while the event loops
/// still run; cancelled work that has not started never runs.
final class BlockingPoolTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var gate: Gate!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        gate = Gate()
    }

    override func tearDown() {
        gate.openGate()
        try? group.syncShutdownGracefully()
    }

    private func isShutDown(_ future: EventLoopFuture<some Sendable>) -> Bool {
        do {
            _ = try future.wait()
            return false
        } catch {
            return error is BlockingPool.ShutDown
        }
    }

    func testWorkRunsOnThePoolAndCompletesOnTheLoop() throws {
        let pool = BlockingPool(numberOfThreads: 1)
        defer { pool.shutdown() }
        let loop = group.next()
        let result = try pool.run(on: loop) { 6 * 7 }
            .map { value -> (Int, Bool) in (value, loop.inEventLoop) }
            .wait()
        XCTAssertEqual(result.0, 42)
        XCTAssertTrue(result.1)
    }

    /// Shutdown fails running and queued work at once; the running work, ending after the
    /// event loop is gone, touches nothing, and the queued work never runs.
    func testShutdownAnswersWorkWithoutWaitingForIt() throws {
        let pool = BlockingPool(numberOfThreads: 1)
        let gate = self.gate!
        let ended = DispatchSemaphore(value: 0)
        let running = pool.run(on: group.next()) { () -> Int in
            gate.pass("running")
            ended.signal()
            return 1
        }
        let queued = pool.run(on: group.next()) { gate.pass("queued"); return 2 }
        XCTAssertTrue(gate.waitForArrivals(1))
        pool.shutdown()
        XCTAssertTrue(isShutDown(running))
        XCTAssertTrue(isShutDown(queued))
        XCTAssertTrue(isShutDown(pool.run(on: group.next()) { 3 }), "new work is refused")
        try group.syncShutdownGracefully()
        gate.openGate()
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(gate.arrivals(of: "queued"), 0, "queued work never ran")
    }

    /// Work whose cancellation is raised while it waits for a thread fails without running.
    func testCancelledWorkNeverStarts() throws {
        let pool = BlockingPool(numberOfThreads: 1)
        defer { pool.shutdown() }
        let gate = self.gate!
        let blocker = pool.run(on: group.next()) { gate.pass("blocker") }
        let cancellation = WorkCancellation()
        let cancelled = pool.run(on: group.next(), unless: cancellation) { gate.pass("cancelled") }
        XCTAssertTrue(gate.waitForArrivals(1))
        cancellation.cancel()
        gate.openGate()
        XCTAssertNoThrow(try blocker.wait())
        XCTAssertThrowsError(try cancelled.wait()) { XCTAssertTrue($0 is WorkCancellation.Cancelled, "\($0)") }
        XCTAssertEqual(gate.arrivals(of: "cancelled"), 0)
    }
}
