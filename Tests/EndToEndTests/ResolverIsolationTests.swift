import Dispatch
import Foundation
import NIOCore
import NIOPosix
import XCTest
@testable import ProxyEngine

/// DNS has threads of its own: with the blocking pool full of long work, a request that needs a
/// lookup still gets its answer, and a lookup that does not answer is a 504 `dns_timeout`
/// naming the host, recorded on the flow.
///
/// Names are answered by a lookup function of the test's (`origin.test` is 127.0.0.1,
/// `stuck.test` never answers), on the real resolver's threads.
final class ResolverIsolationTests: XCTestCase {
    func testLookupsAreAnsweredWhileTheBlockingPoolIsFull() async throws {
        let stuck = DispatchSemaphore(value: 0)
        let resolver = SystemHostResolver(limits: .init(threads: 2, timeout: .milliseconds(500))) { host, port in
            if host == "stuck.test" { _ = stuck.wait(timeout: .now() + 30) }
            return [try SocketAddress(ipAddress: "127.0.0.1", port: port)]
        }
        let origin = try await TestOrigin.start()
        let proxy = try await ProxyHarness.start(resolver: resolver)
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let release = DispatchSemaphore(value: 0)
        // The harness's pool has one thread: this work holds it, and the next waits behind it.
        let held = (0..<2).map { _ in
            proxy.blockingPool.run(on: loops.next()) { _ = release.wait(timeout: .now() + 30) }
        }
        func cleanUp() async {
            release.signal()
            release.signal()
            stuck.signal()
            await proxy.shutdown()
            await origin.shutdown()
            try? await loops.shutdownGracefully()
        }
        do {
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://origin.test:\(origin.port)/bytes/100")
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.body.count, 100)

            let timedOut = try await Curl.fetch(viaProxy: proxy.port, "http://stuck.test:\(origin.port)/")
            XCTAssertEqual(timedOut.status, 504)
            XCTAssertEqual(timedOut.bodyText, "no DNS answer for host 'stuck.test' within 500ms\n")
            XCTAssertTrue(timedOut.header("Proxy-Status")?.contains("error=dns_timeout") == true,
                          timedOut.header("Proxy-Status") ?? "no Proxy-Status")
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.last?.host, "stuck.test")
            XCTAssertEqual(flows.last?.error, "no DNS answer for host 'stuck.test' within 500ms")
        } catch {
            await cleanUp()
            throw error
        }
        release.signal()
        release.signal()
        for work in held { try await work.get() }
        await cleanUp()
    }
}
