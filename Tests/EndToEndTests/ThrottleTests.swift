import Foundation
import ProxyCore
import ProxyModel
import Rules
import RulesFile
import XCTest

/// Throttling through real sockets: what a throttle slows arrives whole and in order, both ways,
/// over plain HTTP, decrypted HTTPS and a byte tunnel; flows name the rule (or `--throttle`) that
/// slowed them. How accurate the pace is, is a benchmark figure (`scripts/bench`, phase
/// `throttle`), never a timed assertion here.
final class ThrottleTests: XCTestCase {
    private static let rules = """
        rules:
          - name: Slow bytes
            match: { host: [127.0.0.1, localhost], path: "/bytes/*" }
            throttle: { down: 4mbit, up: 4mbit, latency: 20ms }
          - name: Slow echo
            match: { host: [127.0.0.1, localhost], path: /echo }
            throttle: { down: 4mbit, up: 2mbit }
        """

    func testThrottledDownloadsAndUploadsArriveWholeAndInOrder() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules(Self.rules)
            let count = 300_000
            let plain = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/bytes/\(count)"))
            XCTAssertEqual(plain.status, 200, plain.result.summary)
            XCTAssertEqual(plain.body, PatternBytes.data(count: count))
            let secure = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/bytes/\(count)"),
                                              ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(secure.status, 200, secure.result.summary)
            XCTAssertEqual(secure.body, PatternBytes.data(count: count))

            let upload = fixture.proxy.file("upload.bin")
            try PatternBytes.writeFile(upload, count: 200_000)
            let echoed = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo"),
                                              ["--data-binary", "@\(upload.path)", "-H", "Content-Type: application/octet-stream"])
            XCTAssertEqual(echoed.status, 200, echoed.result.summary)
            XCTAssertEqual(echoed.body, PatternBytes.data(count: 200_000))

            let unthrottled = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/status/204"))
            XCTAssertEqual(unthrottled.status, 204)

            let flows = try await fixture.proxy.waitForFlows(count: 4).filter { $0.kind == .http }
            XCTAssertEqual(flows.map(\.appliedRules), [["Slow bytes"], ["Slow bytes"], ["Slow echo"], []])
            XCTAssertEqual(flows.first?.responseBody.size, Int64(count))
        }
    }

    /// Several throttled exchanges at once, sharing nothing but the origin: each completes.
    func testConcurrentThrottledDownloadsAllComplete() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules(Self.rules)
            try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/bytes/100000")).body
                    }
                }
                for try await body in group {
                    XCTAssertEqual(body, PatternBytes.data(count: 100_000))
                }
            }
            let flows = try await fixture.proxy.waitForFlows(count: 6)
            XCTAssertEqual(flows.count, 6)
            XCTAssertTrue(flows.allSatisfy { $0.appliedRules == ["Slow bytes"] && $0.status == 200 })
        }
    }

    /// `--throttle` slows a CONNECT relay too (decided at the CONNECT: no request to match), and
    /// the tunnel's bytes cross both ways, whole.
    func testAThrottledTunnelRelaysEveryByte() async throws {
        let echo = try await TCPEchoServer.start()
        defer { Task { await echo.shutdown() } }
        try await Fixture.run({ configuration in
            configuration.throttle = try? ThrottleSpec.parse("down=8mbit,up=8mbit,latency=10ms")
        }) { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            let message = PatternBytes.data(count: 250_000)
            try client.send(message)
            XCTAssertEqual(try client.receive(count: message.count, timeout: 20), message)
            client.close()
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.kind, .tunnel)
            XCTAssertEqual(flows.first?.appliedRules, ["--throttle"])
            XCTAssertEqual(flows.first?.bytesDown, 250_000)
        }
    }

    /// `throttle: off` exempts what it matches from `--throttle`; the rest is slowed and says so.
    func testARuleExemptsFromTheGlobalThrottle() async throws {
        let rules = LiveRules(try RulesFile.parse("""
            rules:
              - name: Fast status
                match: { host: 127.0.0.1, path: "/status/*" }
                throttle: off
            """, file: "rules.yml", baseDirectory: "/"))
        try await Fixture.run(rules: rules, { configuration in
            configuration.throttle = try? ThrottleSpec.parse("3g")
        }) { proxy, origin in
            let exempt = try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/204"))
            XCTAssertEqual(exempt.status, 204)
            let slowed = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/2000"))
            XCTAssertEqual(slowed.body, PatternBytes.data(count: 2_000))
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.map(\.appliedRules), [["Fast status"], ["--throttle"]])
        }
    }

    /// On one keep-alive connection, an upload after a throttled one goes at full speed and
    /// whole (the pace changed while the next request's bytes waited once stalled it for 60 s).
    func testAnUploadAfterAThrottledOneOnTheSameConnectionIsNotStalled() async throws {
        let rules = LiveRules(try RulesFile.parse("""
            rules:
              - name: Slow upload
                match: { host: 127.0.0.1, path: /echo/slow }
                throttle: { up: 512kbit }
            """, file: "rules.yml", baseDirectory: "/"))
        try await Fixture.run(rules: rules, { _ in }) { proxy, origin in
            let body = proxy.file("upload.bin")
            try PatternBytes.writeFile(body, count: 50_000)
            for order in [["/echo/slow", "/echo"], ["/echo", "/echo/slow", "/echo"]] {
                var arguments = ["-x", proxy.proxyURL, "-w", "%{http_code}\n"]
                for (index, path) in order.enumerated() {
                    if index > 0 { arguments += ["--next", "-x", proxy.proxyURL, "-w", "%{http_code}\n"] }
                    arguments += ["--data-binary", "@\(body.path)", origin.url(path), "-o", "/dev/null"]
                }
                let result = try await Curl.run(arguments, timeout: 20)
                XCTAssertEqual(result.exitCode, 0, "\(order): \(result.summary)")
                XCTAssertEqual(result.stdoutText, String(repeating: "200\n", count: order.count), "\(order)")
            }
            let flows = try await proxy.waitForFlows(count: 5)
            XCTAssertEqual(flows.map { $0.path == "/echo/slow" ? ["Slow upload"] : [] }, flows.map(\.appliedRules))
            XCTAssertTrue(flows.allSatisfy { $0.requestBody.size == 50_000 && $0.error == nil })
            XCTAssertEqual(origin.log.requests.map(\.bodyLength), Array(repeating: 50_000, count: 5), "every body arrived whole")
        }
    }

    /// A throttled response that ends with the connection (no length: read until close) keeps
    /// every byte read before the close: the end waits behind them.
    func testAResponseEndingAtCloseKeepsItsLastBytes() async throws {
        try await Fixture.run({ configuration in
            configuration.throttle = try? ThrottleSpec.parse("down=4mbit")
        }) { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/then-close/120000"))
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.body, PatternBytes.data(count: 120_000))
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.responseBody.size, 120_000)
            XCTAssertNil(flows.first?.error)
        }
    }
}
