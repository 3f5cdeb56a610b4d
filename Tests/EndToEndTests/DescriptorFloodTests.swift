import Foundation
import TestSupport
import XCTest

/// Running out of descriptors, with the real `proxyapp run` started under
/// `prlimit --nofile=128:128` and flooded with more connections than it has descriptors:
/// - within its budget (`--max-connections 20`), the connections past the limit get a 503 and
///   are closed, the served ones keep working, and the slots come back when the flood goes;
/// - with a limit that cannot fit (`--max-connections 1000`), accepting pauses on EMFILE and the
///   extra connections wait in the listen backlog, to be served once descriptors free up.
/// In both, the proxy's CPU time over an idle window with the flood open shows no busy loop (a
/// correctness check with generous slack, not a benchmark: spinning on `accept` cost 23–56 % of
/// a core), and a normal request succeeds after the flood.
final class DescriptorFloodTests: XCTestCase {
    private static let prlimit = "/usr/bin/prlimit"
    /// CPU time the proxy may use in `idleWindow` with the flood open: 5 % of one core.
    private static let idleWindow: TimeInterval = 3
    private static let idleTicksAllowed = 15
    private static let request = "GET http://proxyapp.cert/ HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n"

    /// Runs `body` with a proxy limited to 128 descriptors, and stops the proxy afterwards.
    private func withProxy(maxConnections: Int, _ body: (ProxyAppProcess) async throws -> Void) async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                       "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: Self.prlimit), "needs prlimit (util-linux)")
        // Not created here: proxyapp creates its own data directory.
        let data = try makeTemporaryDirectory("fds").url.appendingPathComponent("data", isDirectory: true)
        let proxy = try await ProxyAppProcess.startHeadless(
            executable: executable, dataDirectory: data,
            arguments: ["--no-intercept", "--max-connections", "\(maxConnections)"],
            launcher: [Self.prlimit, "--nofile=128:128"])
        do {
            try await body(proxy)
        } catch {
            await proxy.stop()
            throw error
        }
        await proxy.stop()
    }

    /// Fails when the proxy used more than `idleTicksAllowed` of CPU over `idleWindow`.
    private func assertNoBusyLoop(_ proxy: ProxyAppProcess, file: StaticString = #filePath, line: UInt = #line) async throws {
        let before = try XCTUnwrap(proxy.cpuTicks, file: file, line: line)
        try await Task.sleep(nanoseconds: UInt64(Self.idleWindow * 1e9))
        let used = try XCTUnwrap(proxy.cpuTicks, file: file, line: line) - before
        XCTAssertLessThanOrEqual(used, Self.idleTicksAllowed,
                                 "the proxy used \(used) ticks of CPU in \(Self.idleWindow) s while idle with the flood open",
                                 file: file, line: line)
    }

    /// Polls with curl (at most 10 s) until a request through the proxy gets 200.
    private func assertServesAgain(_ proxy: ProxyAppProcess, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = Date().addingTimeInterval(10)
        var last: Int?
        repeat {
            last = try await Curl.fetch(viaProxy: proxy.port, "http://proxyapp.cert/", timeout: 5).status
            if last == 200 { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        XCTFail("no 200 after the flood (last status \(String(describing: last))); output:\n\(proxy.output)", file: file, line: line)
    }

    /// Opens `count` connections, each sending one request at once, and returns the status each
    /// got (nil: no answer within 10 s).
    private func flood(_ proxy: ProxyAppProcess, count: Int) throws -> (clients: [RawClient], statuses: [Int?]) {
        let clients = try (0..<count).map { _ in
            let client = try RawClient(port: proxy.port)
            try client.send(Self.request)
            return client
        }
        let statuses = clients.map { try? $0.readResponse(timeout: 10).status }
        return (clients, statuses)
    }

    func testConnectionsPastTheLimitGet503AndTheSlotsComeBack() async throws {
        try await withProxy(maxConnections: 20) { proxy in
            XCTAssertTrue(proxy.output.contains("Connections: at most 20 clients at once, more get 503 (--max-connections)"),
                          proxy.output)
            XCTAssertFalse(proxy.output.contains("warning: --max-connections"), proxy.output)
            let baseline = try XCTUnwrap(proxy.openDescriptors)

            // 150 connections: more than the proxy's 128 descriptors.
            let (clients, statuses) = try flood(proxy, count: 150)
            XCTAssertEqual(statuses.filter { $0 == 200 }.count, 20, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == 503 }.count, 130, "\(statuses)")
            let refused = try XCTUnwrap(clients.indices.first { statuses[$0] == 503 })
            let probe = try RawClient(port: proxy.port)
            try probe.send(Self.request)
            let answer = try probe.readResponse()
            XCTAssertEqual(answer.status, 503)
            XCTAssertEqual(answer.header("Proxy-Status")?.contains("error=connection_limit_reached"), true)
            XCTAssertEqual(answer.bodyText, "ProxyApp is serving its limit of 20 connections (--max-connections); try again shortly.\n")
            XCTAssertEqual(answer.header("Connection"), "close")
            XCTAssertTrue(try probe.readUntilClose(timeout: 10), "the refused connection is closed")
            XCTAssertTrue(try clients[refused].readUntilClose(timeout: 10))

            // The served connections still work while the limit holds.
            let served = try XCTUnwrap(clients.indices.first { statuses[$0] == 200 })
            try clients[served].send(Self.request)
            XCTAssertEqual(try clients[served].readResponse().status, 200)

            try await assertNoBusyLoop(proxy)
            clients.forEach { $0.close() }
            probe.close()
            try await assertServesAgain(proxy)

            // Every slot came back exactly once: 21 connections again get 20 answers and one 503
            // (a slot released twice would let the 21st in; one never released would refuse more).
            var admitted = 0
            var rounds = 0
            repeat {
                rounds += 1
                let (again, statuses) = try flood(proxy, count: 21)
                admitted = statuses.filter { $0 == 200 }.count
                XCTAssertLessThanOrEqual(admitted, 20, "more connections admitted than --max-connections")
                XCTAssertEqual(statuses.filter { $0 == 200 || $0 == 503 }.count, 21, "\(statuses)")
                again.forEach { $0.close() }
                if admitted < 20 { try await Task.sleep(nanoseconds: 200_000_000) }  // closes still being seen
            } while admitted < 20 && rounds < 25
            XCTAssertEqual(admitted, 20)

            // And every descriptor of the flood was closed again.
            var open = Int.max
            for _ in 0..<100 {
                open = try XCTUnwrap(proxy.openDescriptors)
                if open <= baseline { break }
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            XCTAssertLessThanOrEqual(open, baseline, "descriptors left open after the flood")
        }
    }

    func testOutOfDescriptorsPausesAcceptingAndServesTheBacklogLater() async throws {
        try await withProxy(maxConnections: 1000) { proxy in
            XCTAssertTrue(proxy.output.contains("warning: --max-connections 1000 needs about 2314 open files but the limit is 128"),
                          proxy.output)

            // 200 connections: the proxy accepts until EMFILE; the rest wait in the listen backlog.
            let clients = try (0..<200).map { _ in try RawClient(port: proxy.port) }
            for client in clients { try client.send(Self.request) }
            try await Task.sleep(nanoseconds: 1_000_000_000)
            let answeredFirst = clients.indices.filter { index in
                (try? clients[index].read(timeout: 0.02) { (try? RawResponse.parse($0)) != nil }) == true
            }
            XCTAssertGreaterThan(answeredFirst.count, 0, proxy.output)
            XCTAssertLessThan(answeredFirst.count, 200, "the proxy cannot have served 200 connections with 128 descriptors")
            XCTAssertTrue(proxy.output.contains("cannot accept connections: too many open files;"), proxy.output)
            try await assertNoBusyLoop(proxy)

            // Descriptors free up: every connection that waited is accepted and answered, none refused.
            for index in answeredFirst {
                XCTAssertEqual(try clients[index].readResponse().status, 200)
                clients[index].close()
            }
            for (index, client) in clients.enumerated() where !answeredFirst.contains(index) {
                XCTAssertEqual(try client.readResponse(timeout: 20).status, 200, "connection \(index) from the backlog")
                client.close()
            }
            try await assertServesAgain(proxy)
            XCTAssertTrue(proxy.output.contains("accepting connections again"), proxy.output)
        }
    }
}
