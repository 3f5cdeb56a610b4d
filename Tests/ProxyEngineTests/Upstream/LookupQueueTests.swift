import NIOCore
import NIOPosix
import ProxyCore
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The resolver's own threads: a lookup that does not answer costs a 504 after the timeout,
/// never a hang; late answers are dropped; one name is looked up once at a time; the queue is
/// bounded; other blocking work cannot starve lookups; shutdown answers everyone at once.
final class LookupQueueTests: XCTestCase {
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

    /// A resolver whose lookups of names starting with `stuck` wait at the gate, and answer
    /// 127.0.0.1 with the port asked for.
    private func resolver(threads: Int = 2, maxPendingNames: Int = 16, timeout: TimeAmount = .milliseconds(150))
        -> SystemHostResolver {
        let gate = self.gate!
        let resolver = SystemHostResolver(
            limits: .init(threads: threads, maxPendingNames: maxPendingNames, timeout: timeout)
        ) { host, port in
            if host.hasPrefix("stuck") { gate.pass(host) }
            return [try SocketAddress(ipAddress: "127.0.0.1", port: port)]
        }
        addTeardownBlock { resolver.shutdown() }
        return resolver
    }

    private func failure(_ future: EventLoopFuture<[SocketAddress]>) -> ProxyFailure? {
        do {
            _ = try future.wait()
            return nil
        } catch {
            return error as? ProxyFailure
        }
    }

    /// No answer within the timeout: 504 with `Proxy-Status: …error=dns_timeout` and a reason
    /// naming the host.
    func testTimeoutIsA504NamingTheHost() throws {
        let failure = try XCTUnwrap(failure(resolver().resolve(host: "stuck.test", port: 80, on: group.next())))
        XCTAssertEqual(failure, .dnsTimeout(host: "stuck.test", milliseconds: 150))
        XCTAssertEqual(failure.statusCode, 504)
        XCTAssertTrue(failure.proxyStatusHeader.contains("error=dns_timeout"), failure.proxyStatusHeader)
        XCTAssertTrue(failure.message.contains("'stuck.test'"), failure.message)
    }

    /// An answer after the timeout is dropped: the timed-out request stays failed, and a request
    /// that joined the same lookup later gets the answer (one `getaddrinfo` call for both).
    func testLateAnswerIsDroppedAndAJoinerGetsIt() throws {
        let resolver = resolver(timeout: .seconds(1))
        let first = resolver.resolve(host: "stuck-late.test", port: 80, on: group.next())
        XCTAssertEqual(failure(first), .dnsTimeout(host: "stuck-late.test", milliseconds: 1000))
        let second = resolver.resolve(host: "stuck-late.test", port: 80, on: group.next())
        gate.openGate()
        XCTAssertEqual(try second.wait().map(\.port), [80])
        XCTAssertEqual(gate.arrivals(of: "stuck-late.test"), 1, "the second request joined the running lookup")
        XCTAssertEqual(failure(first), .dnsTimeout(host: "stuck-late.test", milliseconds: 1000))
        // The finished lookup is gone: the next request asks again.
        XCTAssertEqual(try resolver.resolve(host: "stuck-late.test", port: 80, on: group.next()).wait().count, 1)
        XCTAssertEqual(gate.arrivals(of: "stuck-late.test"), 2)
    }

    /// Requests for one name in flight at once share one lookup; another port is another lookup.
    func testSameNameSharesOneLookup() throws {
        let resolver = resolver(timeout: .seconds(10))
        let futures = (0..<5).map { _ in resolver.resolve(host: "stuck-shared.test", port: 80, on: group.next()) }
        let otherPort = resolver.resolve(host: "stuck-shared.test", port: 81, on: group.next())
        XCTAssertTrue(gate.waitForArrivals(2))
        gate.openGate()
        for future in futures {
            XCTAssertEqual(try future.wait().map(\.port), [80])
        }
        XCTAssertEqual(try otherPort.wait().map(\.port), [81])
        XCTAssertEqual(gate.arrivals(of: "stuck-shared.test"), 2)
    }

    /// Past `maxPendingNames` names queued or running, a lookup fails at once with a reason.
    func testQueueIsBounded() throws {
        let resolver = resolver(threads: 1, maxPendingNames: 2, timeout: .seconds(10))
        let running = resolver.resolve(host: "stuck-a.test", port: 80, on: group.next())
        let queued = resolver.resolve(host: "stuck-b.test", port: 80, on: group.next())
        let refused = try XCTUnwrap(failure(resolver.resolve(host: "c.test", port: 80, on: group.next())))
        guard case .dnsFailure("c.test", let reason) = refused else { return XCTFail("\(refused)") }
        XCTAssertTrue(reason.contains("too many lookups in progress (2 names)"), reason)
        XCTAssertEqual(refused.statusCode, 502)
        gate.openGate()
        XCTAssertEqual(try running.wait().count, 1)
        XCTAssertEqual(try queued.wait().count, 1)
    }

    /// A queued lookup whose every request timed out is never started, and frees its place in
    /// the queue at once.
    func testAbandonedQueuedLookupNeverRuns() throws {
        let resolver = resolver(threads: 1, maxPendingNames: 2)
        let running = resolver.resolve(host: "stuck-a.test", port: 80, on: group.next())
        let queued = resolver.resolve(host: "stuck-b.test", port: 80, on: group.next())
        XCTAssertEqual(failure(queued), .dnsTimeout(host: "stuck-b.test", milliseconds: 150))
        XCTAssertEqual(failure(running), .dnsTimeout(host: "stuck-a.test", milliseconds: 150))
        // stuck-a still holds its thread (and its place): one more name fits.
        let next = resolver.resolve(host: "next.test", port: 80, on: group.next())
        gate.openGate()
        XCTAssertEqual(try next.wait().count, 1)
        XCTAssertEqual(gate.arrivals(of: "stuck-b.test"), 0, "nobody waited for it any more")
    }

    /// Blocking work filling the blocking pool does not delay a lookup: DNS has its own threads.
    func testLookupCompletesWhileTheBlockingPoolIsSaturated() throws {
        let pool = BlockingPool(numberOfThreads: 2)
        defer { pool.shutdown() }
        let gate = self.gate!
        let jobs = (0..<3).map { index in pool.run(on: group.next()) { gate.pass("job\(index)") } }
        XCTAssertTrue(gate.waitForArrivals(2), "both pool threads are busy")
        let addresses = try resolver(timeout: .seconds(10)).resolve(host: "free.test", port: 80, on: group.next()).wait()
        XCTAssertEqual(addresses.map(\.port), [80])
        XCTAssertEqual(gate.arrivals(of: "job2"), 0, "the third job is still queued")
        gate.openGate()
        for job in jobs { XCTAssertNoThrow(try job.wait()) }
    }

    /// Shutdown answers waiting requests at once (not after the timeout), refuses new ones, and
    /// the stuck lookup answering afterwards touches nothing.
    func testShutdownAnswersEveryoneAtOnce() throws {
        let resolver = resolver(threads: 1, timeout: .seconds(30))
        let running = resolver.resolve(host: "stuck-a.test", port: 80, on: group.next())
        let queued = resolver.resolve(host: "stuck-b.test", port: 80, on: group.next())
        XCTAssertTrue(gate.waitForArrivals(1))
        resolver.shutdown()
        let shuttingDown = ProxyFailure.dnsFailure(host: "stuck-a.test", reason: "the proxy is shutting down")
        XCTAssertEqual(failure(running), shuttingDown)
        XCTAssertEqual(failure(queued), .dnsFailure(host: "stuck-b.test", reason: "the proxy is shutting down"))
        XCTAssertEqual(failure(resolver.resolve(host: "new.test", port: 80, on: group.next())),
                       .dnsFailure(host: "new.test", reason: "the proxy is shutting down"))
        try group.syncShutdownGracefully()
        gate.openGate()  // the lookup ends after the event loop is gone: nobody is told
        XCTAssertTrue(gate.waitForDepartures(1))
    }
}
