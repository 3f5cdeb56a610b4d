import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ProxyCore
import XCTest
@testable import ProxyEngine

/// The bookkeeping around lookups, with answers the test hands out: a lookup that does not
/// answer costs a 504 after the timeout, never a hang; late answers are dropped; one name is
/// looked up once at a time whatever the port; names in flight are bounded; shutdown answers
/// everyone at once.
final class LookupFlightsTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var backend: ManualLookupBackend!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        backend = ManualLookupBackend()
    }

    override func tearDown() {
        try? group.syncShutdownGracefully()
    }

    private func flights(maxPendingNames: Int = 16, timeout: TimeAmount = .milliseconds(150)) -> LookupFlights {
        let flights = LookupFlights(backend: backend, maxPendingNames: maxPendingNames, timeout: timeout)
        addTeardownBlock { flights.shutdown() }
        return flights
    }

    private func failure(_ future: EventLoopFuture<[SocketAddress]>) -> ProxyFailure? {
        do {
            _ = try future.wait()
            return nil
        } catch {
            return error as? ProxyFailure
        }
    }

    private let loopback = [try! SocketAddress(ipAddress: "127.0.0.1", port: 0), try! SocketAddress(ipAddress: "::1", port: 0)]

    /// No answer within the timeout: 504 with `Proxy-Status: …error=dns_timeout` and a reason
    /// naming the host.
    func testTimeoutIsA504NamingTheHost() throws {
        let failure = try XCTUnwrap(failure(flights().resolve(host: "stuck.test", port: 80, on: group.next())))
        XCTAssertEqual(failure, .dnsTimeout(host: "stuck.test", milliseconds: 150))
        XCTAssertEqual(failure.statusCode, 504)
        XCTAssertTrue(failure.proxyStatusHeader.contains("error=dns_timeout"), failure.proxyStatusHeader)
        XCTAssertTrue(failure.message.contains("'stuck.test'"), failure.message)
    }

    /// An answer after the timeout is dropped: the timed-out request stays failed, and a request
    /// that joined the same lookup later gets the answer (one lookup for both).
    func testLateAnswerIsDroppedAndAJoinerGetsIt() throws {
        let flights = flights(timeout: .seconds(1))
        let first = flights.resolve(host: "late.test", port: 80, on: group.next())
        XCTAssertEqual(failure(first), .dnsTimeout(host: "late.test", milliseconds: 1000))
        let second = flights.resolve(host: "late.test", port: 8080, on: group.next())
        backend.answer("late.test", .success(loopback))
        XCTAssertEqual(try second.wait().map(\.port), [8080, 8080])
        XCTAssertEqual(backend.asks("late.test"), 1, "the second request joined the lookup in flight")
        XCTAssertEqual(failure(first), .dnsTimeout(host: "late.test", milliseconds: 1000))
        // The answered lookup is gone: the next request asks again.
        _ = flights.resolve(host: "late.test", port: 80, on: group.next())
        XCTAssertEqual(backend.asks("late.test"), 2)
    }

    /// Requests for one name in flight at once share one lookup, whatever their ports; each
    /// gets the addresses with its own port, in the backend's order.
    func testOneLookupPerNameWhateverThePort() throws {
        let flights = flights(timeout: .seconds(10))
        let futures = (0..<5).map { _ in flights.resolve(host: "shared.test", port: 80, on: group.next()) }
        let otherPort = flights.resolve(host: "shared.test", port: 443, on: group.next())
        XCTAssertEqual(backend.asks("shared.test"), 1)
        backend.answer("shared.test", .success(loopback))
        for future in futures {
            let addresses = try future.wait()
            XCTAssertEqual(addresses.map(\.ipAddress), ["127.0.0.1", "::1"])
            XCTAssertEqual(addresses.map(\.port), [80, 80])
        }
        XCTAssertEqual(try otherPort.wait().map(\.port), [443, 443])
    }

    /// What the backend reports becomes the failure every waiter gets: a reason in words is a
    /// 502 `dns_error`, no answer a 504 `dns_timeout`.
    func testBackendFailuresReachEveryWaiter() throws {
        let flights = flights(timeout: .seconds(10))
        let refused = (0..<2).map { _ in flights.resolve(host: "refused.test", port: 80, on: group.next()) }
        let silent = flights.resolve(host: "silent.test", port: 80, on: group.next())
        backend.answer("refused.test", .failure(.failed(reason: "the DNS server refused the query")))
        backend.answer("silent.test", .failure(.noAnswer))
        for future in refused {
            let failure = try XCTUnwrap(failure(future))
            XCTAssertEqual(failure, .dnsFailure(host: "refused.test", reason: "the DNS server refused the query"))
            XCTAssertEqual(failure.statusCode, 502)
        }
        XCTAssertEqual(failure(silent), .dnsTimeout(host: "silent.test", milliseconds: 10_000))
    }

    /// Past `maxPendingNames` names in flight a lookup fails at once with a reason; names whose
    /// requests all timed out still count until the backend answers them (they are still
    /// queries in flight), and joining a name in flight needs no room.
    func testNamesInFlightAreBounded() throws {
        let flights = flights(maxPendingNames: 2)
        let first = flights.resolve(host: "a.test", port: 80, on: group.next())
        let second = flights.resolve(host: "b.test", port: 80, on: group.next())
        let refused = try XCTUnwrap(failure(flights.resolve(host: "c.test", port: 80, on: group.next())))
        guard case .dnsFailure("c.test", let reason) = refused else { return XCTFail("\(refused)") }
        XCTAssertEqual(reason, "too many lookups in progress (2 names); try again later")
        XCTAssertEqual(refused.statusCode, 502)
        XCTAssertEqual(backend.asks("c.test"), 0)

        XCTAssertEqual(failure(first), .dnsTimeout(host: "a.test", milliseconds: 150))
        XCTAssertEqual(failure(second), .dnsTimeout(host: "b.test", milliseconds: 150))
        XCTAssertEqual(flights.namesInFlight, 2, "abandoned lookups are still in flight")
        XCTAssertNotNil(failure(flights.resolve(host: "d.test", port: 80, on: group.next())))
        XCTAssertEqual(backend.asks("d.test"), 0)
        let joiner = flights.resolve(host: "a.test", port: 80, on: group.next())
        backend.answer("a.test", .success(loopback))
        XCTAssertEqual(try joiner.wait().count, 2)
        XCTAssertEqual(flights.namesInFlight, 1)
        let fits = flights.resolve(host: "d.test", port: 80, on: group.next())
        backend.answer("d.test", .success(loopback))
        XCTAssertEqual(try fits.wait().count, 2)
    }

    /// Shutdown answers waiting requests at once (not after the timeout), refuses new ones,
    /// stops the backend, and an answer coming afterwards touches nothing.
    func testShutdownAnswersEveryoneAtOnce() throws {
        let flights = flights(timeout: .seconds(30))
        let waiting = ["a.test", "b.test", "a.test"].map { flights.resolve(host: $0, port: 80, on: group.next()) }
        flights.shutdown()
        XCTAssertTrue(backend.isStopped)
        for (future, host) in zip(waiting, ["a.test", "b.test", "a.test"]) {
            XCTAssertEqual(failure(future), .dnsFailure(host: host, reason: "the proxy is shutting down"))
        }
        XCTAssertEqual(failure(flights.resolve(host: "new.test", port: 80, on: group.next())),
                       .dnsFailure(host: "new.test", reason: "the proxy is shutting down"))
        XCTAssertEqual(backend.asks("new.test"), 0)
        try group.syncShutdownGracefully()
        backend.answer("a.test", .success(loopback))  // after the event loop is gone: nobody is told
        XCTAssertEqual(flights.namesInFlight, 0)
    }
}
