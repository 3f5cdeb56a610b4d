import FakeDNS
import Foundation
import NIOCore
import NIOPosix
import ProxyCore
import TestSupport
import XCTest
@testable import ProxyEngine

/// c-ares on its one thread, against a DNS server on loopback that answers, fails, waits or
/// never answers as each test says: every query is in flight at once, so names that never
/// answer delay no other name; answers and errors come back as addresses and words; shutdown
/// ends the thread with queries pending.
final class AresResolverThreadTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    override func tearDown() {
        try? group.syncShutdownGracefully()
    }

    /// A server that answers `*.answers.test` and `answers.test` with 127.0.0.1 and ::1, never
    /// answers `*.silent.test`, and answers other names as `reply` says (NXDOMAIN by default).
    private func server(_ reply: @escaping @Sendable (String) -> FakeDNSServer.Reply? = { _ in nil }) async throws
        -> FakeDNSServer {
        let server = try await FakeDNSServer.start { name in
            if let chosen = reply(name) { return chosen }
            if name == "answers.test" || name.hasSuffix(".answers.test") { return .addresses(["127.0.0.1", "::1"]) }
            if name.hasSuffix(".silent.test") { return .silence }
            return .failure(rcode: 3)
        }
        addTeardownBlock { await server.shutdown() }
        return server
    }

    /// A resolver asking only `server`, with its thread, shut down at the end of the test.
    private func resolver(asking server: FakeDNSServer, timeout: TimeAmount = .seconds(30), maxPendingNames: Int = 4096,
                          _ adjust: (inout SystemHostResolver.Configuration) -> Void = { _ in },
                          backend adjustBackend: (inout AresResolverThread.Configuration) -> Void = { _ in }) throws
        -> (SystemHostResolver, AresResolverThread) {
        var configuration = SystemHostResolver.Configuration(maxPendingNames: maxPendingNames, timeout: timeout,
                                                             servers: [server.address])
        adjust(&configuration)
        var backend = configuration.backend
        adjustBackend(&backend)
        let thread = try AresResolverThread(configuration: backend)
        let resolver = SystemHostResolver(configuration: configuration, backend: thread)
        addTeardownBlock { resolver.shutdown() }
        return (resolver, thread)
    }

    private func failure(_ future: EventLoopFuture<[SocketAddress]>) async -> ProxyFailure? {
        do {
            _ = try await future.get()
            return nil
        } catch {
            return error as? ProxyFailure
        }
    }

    /// 50 names whose server never answers are all asked at once (the server sees every one
    /// before anything else happens), and a name that answers is resolved while they all still
    /// wait: no number of silent names holds the resolver.
    func testFiftySilentNamesDoNotDelayAnAnsweringName() async throws {
        let server = try await server()
        let (resolver, _) = try resolver(asking: server)
        let silentNames = (0..<50).map { "n\($0).silent.test" }
        let silent = silentNames.map { resolver.resolve(host: $0, port: 80, on: group.next()) }
        let allAsked = await server.waitUntilQueried(silentNames)
        XCTAssertTrue(allAsked, "every silent name is in flight at once")

        let answered = try await resolver.resolve(host: "www.answers.test", port: 8080, on: group.next()).get()
        XCTAssertEqual(Set(answered.compactMap(\.ipAddress)), ["127.0.0.1", "::1"])
        XCTAssertEqual(Set(answered.compactMap(\.port)), [8080])
        // The silent names are still waiting (their timeout is 30 s): the shutdown answers them.
        resolver.shutdown()
        for future in silent {
            let message = await failure(future)?.message
            XCTAssertEqual(message?.hasSuffix(": the proxy is shutting down"), true,
                           "still waiting when the answering name was resolved")
        }
    }

    /// A server that never answers: 504 `dns_timeout` naming the host, after the timeout.
    func testSilentServerIsA504() async throws {
        let server = try await server()
        let (resolver, _) = try resolver(asking: server, timeout: .milliseconds(300))
        let timedOut = await failure(resolver.resolve(host: "x.silent.test", port: 80, on: group.next()))
        let failure = try XCTUnwrap(timedOut)
        XCTAssertEqual(failure, .dnsTimeout(host: "x.silent.test", milliseconds: 300))
        XCTAssertEqual(failure.statusCode, 504)
        XCTAssertEqual(failure.proxyStatusError, "dns_timeout")
    }

    /// A server that answers later, within the timeout: the addresses arrive.
    func testSlowAnswerWithinTheTimeoutArrives() async throws {
        let server = try await server { name in
            name == "slow.test" ? .after(.milliseconds(300), .addresses(["192.0.2.7"])) : nil
        }
        let (resolver, _) = try resolver(asking: server, timeout: .seconds(10))
        let addresses = try await resolver.resolve(host: "slow.test", port: 80, on: group.next()).get()
        XCTAssertEqual(addresses.compactMap(\.ipAddress), ["192.0.2.7"])
    }

    /// Requests for one name in flight share one query per record type, whatever their ports.
    func testOneQueryPerNameInFlight() async throws {
        let server = try await server { name in name == "held.test" ? .hold : nil }
        let (resolver, _) = try resolver(asking: server)
        let futures = (0..<5).map { index in resolver.resolve(host: "held.test", port: 80 + index, on: group.next()) }
        let asked = await server.waitUntilQueried(["held.test"])
        XCTAssertTrue(asked)
        server.release("held.test", with: .addresses(["192.0.2.1", "2001:db8::1"]))
        for (index, future) in futures.enumerated() {
            let addresses = try await future.get()
            XCTAssertEqual(Set(addresses.compactMap(\.ipAddress)), ["192.0.2.1", "2001:db8::1"])
            XCTAssertEqual(Set(addresses.compactMap(\.port)), [80 + index])
        }
        XCTAssertEqual(server.queryCount("held.test"), 2, "one A and one AAAA query")
    }

    /// A name with only IPv4 or only IPv6 addresses resolves to those.
    func testEitherFamilyAlone() async throws {
        let server = try await server { name in
            switch name {
            case "v4.test": return .addresses(["192.0.2.4"])
            case "v6.test": return .addresses(["2001:db8::6"])
            default: return nil
            }
        }
        let (resolver, _) = try resolver(asking: server)
        let v4 = try await resolver.resolve(host: "v4.test", port: 1, on: group.next()).get()
        XCTAssertEqual(v4.compactMap(\.ipAddress), ["192.0.2.4"])
        let v6 = try await resolver.resolve(host: "v6.test", port: 1, on: group.next()).get()
        XCTAssertEqual(v6.compactMap(\.ipAddress), ["2001:db8::6"])
    }

    /// DNS errors reach the request as one line in words, 502 `dns_error`. A server answering
    /// SERVFAIL or REFUSED is skipped for the next one (as glibc does); when none is left, the
    /// reason says so.
    func testDNSErrorsAreReasonsInWords() async throws {
        let server = try await server { name in
            switch name {
            case "servfail.test": return .failure(rcode: 2)
            case "refused.test": return .failure(rcode: 5)
            case "empty.test": return .addresses([])
            default: return nil
            }
        }
        let (resolver, _) = try resolver(asking: server)
        let expected = [
            "missing.test": "no such name in DNS (NXDOMAIN)",
            "servfail.test": "no DNS server would answer: each refused, failed or could not be reached",
            "refused.test": "no DNS server would answer: each refused, failed or could not be reached",
            "empty.test": "the name has no IPv4 or IPv6 address",
        ]
        for (host, reason) in expected {
            let failure = await failure(resolver.resolve(host: host, port: 80, on: group.next()))
            XCTAssertEqual(failure, .dnsFailure(host: host, reason: reason))
            XCTAssertEqual(failure?.statusCode, 502)
        }
    }

    /// Past the bound of names in flight, a new name fails at once; names in flight go on.
    func testNamesInFlightAreBounded() async throws {
        let server = try await server()
        let (resolver, _) = try resolver(asking: server, maxPendingNames: 3)
        let silent = (0..<3).map { resolver.resolve(host: "n\($0).silent.test", port: 80, on: group.next()) }
        let refused = await failure(resolver.resolve(host: "www.answers.test", port: 80, on: group.next()))
        XCTAssertEqual(refused, .dnsFailure(host: "www.answers.test",
                                            reason: "too many lookups in progress (3 names); try again later"))
        resolver.shutdown()
        for future in silent {
            let failed = await failure(future)
            XCTAssertNotNil(failed)
        }
    }

    /// Shutdown with queries pending: every request is answered at once, the thread ends (no
    /// thread left behind), and the server answering afterwards touches nothing.
    func testShutdownWithPendingQueriesEndsTheThread() async throws {
        let server = try await server { name in name == "held.test" ? .hold : nil }
        let (resolver, thread) = try resolver(asking: server)
        let pending = (0..<10).map { resolver.resolve(host: "n\($0).silent.test", port: 80, on: group.next()) }
        let held = resolver.resolve(host: "held.test", port: 80, on: group.next())
        let asked = await server.waitUntilQueried(["held.test", "n9.silent.test"])
        XCTAssertTrue(asked)
        resolver.shutdown()
        XCTAssertTrue(thread.waitUntilStopped(timeout: .seconds(1)), "the resolver thread ended")
        for future in pending + [held] {
            guard case .dnsFailure(_, let reason)? = await failure(future) else { return XCTFail("not answered") }
            XCTAssertEqual(reason, "the proxy is shutting down")
        }
        server.release("held.test", with: .addresses(["192.0.2.1"]))
        let refused = await failure(resolver.resolve(host: "www.answers.test", port: 80, on: group.next()))
        XCTAssertEqual(refused, .dnsFailure(host: "www.answers.test", reason: "the proxy is shutting down"))
    }

    /// Queries leave from fresh sockets (new source ports) every 100 lookups, even while one
    /// query is kept waiting (c-ares would otherwise keep its one socket, and its port, for as
    /// long as any query is pending); the waiting query is still answered from its old socket.
    func testSourcePortsChangeWhileAQueryIsKeptWaiting() async throws {
        let server = try await server { name in name == "held.test" ? .hold : nil }
        let (resolver, _) = try resolver(asking: server)
        let held = resolver.resolve(host: "held.test", port: 80, on: group.next())
        let asked = await server.waitUntilQueried(["held.test"])
        XCTAssertTrue(asked)
        for index in 0..<250 {
            let addresses = try await resolver.resolve(host: "n\(index).answers.test", port: 80, on: group.next()).get()
            XCTAssertEqual(addresses.count, 2)
        }
        let ports = server.sourcePorts { $0.hasSuffix(".answers.test") }
        XCTAssertGreaterThanOrEqual(ports.count, 3, "a fresh socket every 100 lookups: \(ports.sorted())")
        server.release("held.test", with: .addresses(["192.0.2.1"]))
        let answered = try await held.get()
        XCTAssertEqual(answered.compactMap(\.ipAddress), ["192.0.2.1"])
    }

    /// Old channels kept for their waiting queries are bounded (each holds sockets): past the
    /// bound new lookups stay on the current channel, and every waiting query is answered.
    func testDrainingChannelsAreBounded() async throws {
        let server = try await server { name in name.hasSuffix(".held.test") ? .hold : nil }
        let (resolver, _) = try resolver(asking: server) { _ in } backend: { backend in
            backend.lookupsPerChannel = 1
            backend.maxDrainingChannels = 2
        }
        let names = (0..<10).map { "h\($0).held.test" }
        let held = names.map { resolver.resolve(host: $0, port: 80, on: group.next()) }
        let asked = await server.waitUntilQueried(names)
        XCTAssertTrue(asked)
        let ports = server.sourcePorts { $0.hasSuffix(".held.test") }
        XCTAssertLessThanOrEqual(ports.count, 3, "the current channel and two draining: \(ports.sorted())")
        for name in names { server.release(name, with: .addresses(["192.0.2.9"])) }
        for future in held {
            let addresses = try await future.get()
            XCTAssertEqual(addresses.compactMap(\.ipAddress), ["192.0.2.9"])
        }
    }

    /// Names in the hosts file are answered from it without a DNS query, and an edited file is
    /// followed by the next lookups.
    func testHostsFileAnswersWithoutDNSAndEditsAreFollowed() async throws {
        let directory = try makeTemporaryDirectory().url
        let hostsFile = directory.appendingPathComponent("hosts")
        try "192.0.2.10 pinned.answers.test\n::1 pinned.answers.test\n".write(to: hostsFile, atomically: true, encoding: .utf8)
        let server = try await server()
        let (resolver, _) = try resolver(asking: server) { configuration in
            configuration.hostsPath = hostsFile.path
            configuration.fileCheckInterval = .zero
        }
        let pinned = try await resolver.resolve(host: "pinned.answers.test", port: 443, on: group.next()).get()
        XCTAssertEqual(pinned.compactMap(\.ipAddress), ["192.0.2.10", "::1"])
        XCTAssertEqual(pinned.compactMap(\.port), [443, 443])
        XCTAssertEqual(server.queryCount("pinned.answers.test"), 0)

        try "192.0.2.11 pinned.answers.test\n".write(to: hostsFile, atomically: true, encoding: .utf8)
        let edited = try await resolver.resolve(host: "pinned.answers.test", port: 443, on: group.next()).get()
        XCTAssertEqual(edited.compactMap(\.ipAddress), ["192.0.2.11"])
        try "# nothing\n".write(to: hostsFile, atomically: true, encoding: .utf8)
        let fromDNS = try await resolver.resolve(host: "pinned.answers.test", port: 443, on: group.next()).get()
        XCTAssertEqual(Set(fromDNS.compactMap(\.ipAddress)), ["127.0.0.1", "::1"])
        XCTAssertEqual(server.queryCount("pinned.answers.test"), 2, "asked DNS once the file no longer named it")
    }

    /// A changed resolv.conf is followed by new lookups (here: its search domain), as glibc
    /// does; c-ares alone would keep what it read at start.
    func testChangedResolvConfIsFollowed() async throws {
        let directory = try makeTemporaryDirectory().url
        let resolvConf = directory.appendingPathComponent("resolv.conf")
        try "search one.test\n".write(to: resolvConf, atomically: false, encoding: .utf8)
        let server = try await server { name in name == "box.two.test" ? .addresses(["192.0.2.2"]) : nil }
        let (resolver, _) = try resolver(asking: server) { configuration in
            configuration.resolvConfPath = resolvConf.path
            configuration.fileCheckInterval = .zero
        }
        let before = await failure(resolver.resolve(host: "box", port: 80, on: group.next()))
        XCTAssertEqual(before, .dnsFailure(host: "box", reason: "no such name in DNS (NXDOMAIN)"))
        XCTAssertTrue(server.queriedNames.contains("box.one.test"), "\(server.queriedNames)")

        try "search two.test\nsearch two.test\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let addresses = try await resolver.resolve(host: "box", port: 80, on: group.next()).get()
        XCTAssertEqual(addresses.compactMap(\.ipAddress), ["192.0.2.2"])
    }
}
