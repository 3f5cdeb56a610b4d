import Dispatch
import FakeDNS
import Foundation
import NIOCore
import NIOPosix
import XCTest
@testable import ProxyEngine

/// DNS has a thread of its own with every lookup in flight at once: names that never resolve
/// delay no other client's lookup, a full blocking pool delays none either, and a lookup that
/// gets no answer is a 504 `dns_timeout` naming the host, recorded on the flow.
///
/// Names are answered by a `FakeDNSServer` on loopback (`origin.test` is 127.0.0.1, names under
/// `silent.test` never get an answer), asked by the real resolver (c-ares).
final class ResolverIsolationTests: XCTestCase {
    private func startDNS() async throws -> FakeDNSServer {
        try await FakeDNSServer.start { name in
            name == "origin.test" ? .addresses(["127.0.0.1"]) : name.hasSuffix(".silent.test") ? .silence : .failure(rcode: 3)
        }
    }

    func testLookupsAreAnsweredWhileTheBlockingPoolIsFull() async throws {
        let dns = try await startDNS()
        let resolver = try SystemHostResolver(configuration: .init(timeout: .milliseconds(500), servers: [dns.address]))
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
            await proxy.shutdown()
            await origin.shutdown()
            await dns.shutdown()
            try? await loops.shutdownGracefully()
        }
        do {
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://origin.test:\(origin.port)/bytes/100")
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.body.count, 100)

            let timedOut = try await Curl.fetch(viaProxy: proxy.port, "http://stuck.silent.test:\(origin.port)/")
            XCTAssertEqual(timedOut.status, 504)
            XCTAssertEqual(timedOut.bodyText, "no DNS answer for host 'stuck.silent.test' within 500ms\n")
            XCTAssertTrue(timedOut.header("Proxy-Status")?.contains("error=dns_timeout") == true,
                          timedOut.header("Proxy-Status") ?? "no Proxy-Status")
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.last?.host, "stuck.silent.test")
            XCTAssertEqual(flows.last?.error, "no DNS answer for host 'stuck.silent.test' within 500ms")
        } catch {
            await cleanUp()
            throw error
        }
        release.signal()
        release.signal()
        for work in held { try await work.get() }
        await cleanUp()
    }

    /// A client holding 20 requests for names that never resolve (20 connections: one request
    /// at a time each) does not delay another client's request for a name that resolves: the
    /// DNS server sees all 20 queries before that request is sent, it is answered 200, and the
    /// 20 are still waiting afterwards (the shutdown of the resolver answers them).
    func testNamesThatNeverResolveDoNotDelayAnotherClient() async throws {
        let dns = try await startDNS()
        let resolver = try SystemHostResolver(configuration: .init(timeout: .seconds(30), servers: [dns.address]))
        let origin = try await TestOrigin.start()
        let proxy = try await ProxyHarness.start(resolver: resolver)
        var attackers: [RawClient] = []
        func cleanUp() async {
            for client in attackers { client.close() }
            await proxy.shutdown()
            await origin.shutdown()
            await dns.shutdown()
        }
        do {
            let names = (0..<20).map { "a\($0).silent.test" }
            for name in names {
                let client = try RawClient(port: proxy.port)
                try client.send("GET http://\(name):\(origin.port)/ HTTP/1.1\r\nHost: \(name):\(origin.port)\r\n\r\n")
                attackers.append(client)
            }
            let allAsked = await dns.waitUntilQueried(names)
            XCTAssertTrue(allAsked, "all 20 lookups are in flight: \(dns.queriedNames.sorted())")

            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://origin.test:\(origin.port)/bytes/100", timeout: 10)
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.body.count, 100)

            resolver.shutdown()
            for (client, name) in zip(attackers, names) {
                let response = try client.readResponse(timeout: 10)
                XCTAssertEqual(response.status, 502)
                XCTAssertEqual(response.bodyText, "cannot resolve host '\(name)': the proxy is shutting down\n",
                               "still waiting for DNS after the other client was served")
            }
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }
}
