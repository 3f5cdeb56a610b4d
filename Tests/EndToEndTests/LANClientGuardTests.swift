import Foundation
import ProxyCore
import ProxyEngine
import Rules
import RulesFile
import XCTest

/// Clients from another machine: `--allow-clients` admits or refuses them at connect, `--auth`
/// makes them log in, and without `--allow-internal` they never reach this machine's own
/// services (loopback, link-local, its interface addresses) — by literal, by `localhost`, through
/// CONNECT, or through a pooled connection a local client opened. Rules the operator wrote may
/// still point at local services.
///
/// "Another machine" is a client connecting from one of this machine's non-loopback addresses
/// (`curl --interface`), to a proxy listening on 0.0.0.0. A machine with no such address skips
/// these tests, saying so.
final class LANClientGuardTests: XCTestCase {
    private func lanAddress() throws -> String {
        guard let address = LocalInterfaces.all().first(where: {
            !$0.address.isLoopback && !$0.address.isLinkLocal && $0.isUp && $0.address.isIPv4
        }) else {
            throw XCTSkip("this machine has no non-loopback IPv4 address to connect from")
        }
        return address.address.description
    }

    private func run(rules: LiveRules = LiveRules(), _ configure: @escaping (inout ClientAccessPolicy) -> Void,
                     _ body: (ProxyHarness, TestOrigin, String) async throws -> Void) async throws {
        let lan = try lanAddress()
        try await Fixture.run(rules: rules, { configuration in
            configuration.listenHost = "0.0.0.0"
            configuration.access.ownAddresses = Set(LocalInterfaces.all().map(\.address))
            configure(&configuration.access)
        }) { proxy, origin in
            try await body(proxy, origin, lan)
        }
    }

    /// curl from the LAN address through the proxy's LAN address.
    private func fromLAN(_ lan: String, _ proxy: ProxyHarness, _ arguments: [String]) async throws -> Curl.Result {
        try await Curl.run(["--interface", lan, "-x", "http://\(lan):\(proxy.port)"] + arguments)
    }

    private static func withAuth(_ access: inout ClientAccessPolicy) {
        access.credentials.add(user: "phone", password: "pw")
    }

    func testLoopbackAndOwnAddressesAreRefused() async throws {
        try await run(Self.withAuth) { proxy, origin, lan in
            var refused = 0
            for url in ["http://127.0.0.1:\(origin.port)/echo/a", "http://localhost:\(origin.port)/echo/b",
                        "http://[::ffff:127.0.0.1]:\(origin.port)/echo/c", "http://2130706433:\(origin.port)/echo/d",
                        "http://\(lan):\(origin.port)/echo/e"] {
                let result = try await fromLAN(lan, proxy, ["--proxy-user", "phone:pw", "-w", "\n%{http_code}", url])
                XCTAssertTrue(result.stdoutText.hasSuffix("\n403"), "\(url): \(result.stdoutText) \(result.summary)")
                XCTAssertTrue(result.stdoutText.contains("on the proxy's own machine") && result.stdoutText.contains("--allow-internal"),
                              result.stdoutText)
                refused += 1
            }
            XCTAssertEqual(origin.log.requests.count, 0)
            let flows = try await proxy.waitForFlows(count: refused)
            XCTAssertEqual(flows.count, refused)
            XCTAssertTrue(flows.allSatisfy { $0.error?.contains("--allow-internal") == true }, "\(flows.map(\.error))")
        }
    }

    func testConnectToLoopbackIsRefusedBeforeTheTunnelOpens() async throws {
        try await run(Self.withAuth) { proxy, origin, lan in
            for host in ["127.0.0.1", "localhost"] {
                let result = try await fromLAN(lan, proxy, ["-p", "--proxy-user", "phone:pw", "-o", "/dev/null",
                                                            "-w", "%{http_connect}", "http://\(host):\(origin.port)/echo/t"])
                XCTAssertEqual(result.stdoutText, "403", "\(host): \(result.summary)")
            }
            XCTAssertEqual(origin.log.acceptedConnections, 0)
        }
    }

    /// A local client's pooled connection to a local service is never handed to a guarded client.
    func testPooledLocalConnectionIsNotShared() async throws {
        try await run(Self.withAuth) { proxy, origin, lan in
            let local = try await Curl.viaProxy(proxy.port, ["--proxy-user", "phone:pw", "-o", "/dev/null", "-w", "%{http_code}",
                                                             "http://127.0.0.1:\(origin.port)/echo/local"])
            XCTAssertEqual(local.stdoutText, "200", local.summary)
            let guarded = try await fromLAN(lan, proxy, ["--proxy-user", "phone:pw", "-o", "/dev/null", "-w", "%{http_code}",
                                                         "http://127.0.0.1:\(origin.port)/echo/lan"])
            XCTAssertEqual(guarded.stdoutText, "403", guarded.summary)
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/echo/local"])
        }
    }

    func testAllowInternalLetsThemThrough() async throws {
        try await run({ access in
            Self.withAuth(&access)
            access.allowsInternalDestinations = true
        }) { proxy, origin, lan in
            let result = try await fromLAN(lan, proxy, ["--proxy-user", "phone:pw", "-o", "/dev/null", "-w", "%{http_code}",
                                                        "http://127.0.0.1:\(origin.port)/echo/ok"])
            XCTAssertEqual(result.stdoutText, "200", result.summary)
        }
    }

    /// A dns rule the operator wrote may send a name to a local service (a mock server).
    func testOperatorRulesMayPointAtLocalServices() async throws {
        let rules = LiveRules(try RulesFile.parse("""
            rules:
              - name: local mock
                match: { host: "api.mock.test" }
                dns: { to: 127.0.0.1 }
            """, file: "rules.yml", baseDirectory: "/"))
        try await run(rules: rules, Self.withAuth) { proxy, origin, lan in
            let result = try await fromLAN(lan, proxy, ["--proxy-user", "phone:pw", "-o", "/dev/null", "-w", "%{http_code}",
                                                        "http://api.mock.test:\(origin.port)/echo/mock"])
            XCTAssertEqual(result.stdoutText, "200", result.summary)
            XCTAssertEqual(origin.log.requests.map(\.uri), ["/echo/mock"])
        }
    }

    func testClientOutsideAllowClientsIsRefusedAtConnect() async throws {
        try await run({ access in
            access.allowedClients = [try! IPNetwork.parse("203.0.113.0/24").get()]
        }) { proxy, origin, lan in
            let result = try await fromLAN(lan, proxy, ["-w", "\n%{http_code}", "http://example.invalid/"])
            XCTAssertTrue(result.stdoutText.hasSuffix("\n403"), result.stdoutText + result.summary)
            XCTAssertTrue(result.stdoutText.contains("clients from \(lan) are not allowed: add its network to --allow-clients"),
                          result.stdoutText)
            // Loopback is always allowed.
            let local = try await Curl.viaProxy(proxy.port, ["-o", "/dev/null", "-w", "%{http_code}",
                                                             "http://127.0.0.1:\(origin.port)/echo/local"])
            XCTAssertEqual(local.stdoutText, "200", local.summary)
            XCTAssertEqual(try proxy.flushedFlows().count, 1, "a refused connection stores nothing")
        }
    }

    /// Refused in the protocol the client speaks: a SOCKS5 greeting gets "no acceptable method",
    /// SOCKS4 "request rejected", a client that says nothing the HTTP 403 after a second.
    func testClientOutsideAllowClientsIsRefusedInItsProtocol() async throws {
        try await run({ access in
            access.allowedClients = [try! IPNetwork.parse("203.0.113.0/24").get()]
        }) { proxy, _, lan in
            let socks5 = try RawClient(port: proxy.port, host: lan)
            try socks5.send(Data([0x05, 0x01, 0x00]))
            XCTAssertEqual(try socks5.receive(count: 2, timeout: 10), Data([0x05, 0xFF]))
            XCTAssertTrue(try socks5.readUntilClose(timeout: 5))
            let socks4 = try RawClient(port: proxy.port, host: lan)
            try socks4.send(Data([0x04, 0x01, 0x00, 0x50, 127, 0, 0, 1, 0]))
            XCTAssertEqual(try socks4.receive(count: 8, timeout: 10), Data([0x00, 0x5B, 0, 0, 0, 0, 0, 0]))
            let silent = try RawClient(port: proxy.port, host: lan)
            let response = try silent.readResponse(timeout: 10)
            XCTAssertEqual(response.status, 403)
            XCTAssertTrue(response.bodyText.contains("--allow-clients"), response.bodyText)
            let curl = try await Curl.run(["--interface", lan, "-x", "socks5h://\(lan):\(proxy.port)", "http://example.invalid/"])
            XCTAssertTrue(curl.stderr.contains("No authentication method was acceptable"), curl.stderr)
        }
    }

    func testAllowedNetworkNeedsNoPasswordButStillNoInternal() async throws {
        try await run({ access in
            access.allowedClients = [try! IPNetwork.parse("0.0.0.0/0").get()]
        }) { proxy, origin, lan in
            let page = try await Curl.run(["--interface", lan, "-o", "/dev/null", "-w", "%{http_code}",
                                           "http://\(lan):\(proxy.port)/"])
            XCTAssertEqual(page.stdoutText, "200", page.summary)
            let guarded = try await fromLAN(lan, proxy, ["-o", "/dev/null", "-w", "%{http_code}",
                                                         "http://127.0.0.1:\(origin.port)/echo/x"])
            XCTAssertEqual(guarded.stdoutText, "403", guarded.summary)
        }
    }

    func testClientFromElsewhereMustLogIn() async throws {
        try await run(Self.withAuth) { proxy, _, lan in
            let result = try await fromLAN(lan, proxy, ["-o", "/dev/null", "-w", "%{http_code}", "http://example.invalid/"])
            XCTAssertEqual(result.stdoutText, "407", result.summary)
            // The CA page, through the proxy or not, needs no password.
            for arguments in [["-x", "http://\(lan):\(proxy.port)"], []] {
                let page = try await Curl.run(["--interface", lan] + arguments + ["-o", "/dev/null", "-w", "%{http_code}",
                                                                                   "http://\(lan):\(proxy.port)/"])
                XCTAssertEqual(page.stdoutText, "200", "\(arguments): \(page.summary)")
            }
        }
    }

    /// Over SOCKS5 as over HTTP: the login is required, and this machine's own services are
    /// "not allowed" (reply 0x02), by literal, by `localhost` and by this machine's LAN address;
    /// a destination elsewhere is still served.
    func testSOCKSClientFromElsewhereIsGuarded() async throws {
        try await run(Self.withAuth) { proxy, origin, lan in
            let anonymous = try await Curl.run(["--interface", lan, "-x", "socks5h://\(lan):\(proxy.port)",
                                                "http://127.0.0.1:\(origin.port)/echo/x"])
            XCTAssertNotEqual(anonymous.exitCode, 0, anonymous.summary)
            for host in ["127.0.0.1", "localhost", lan] {
                let result = try await Curl.run(["--interface", lan, "-x", "socks5h://phone:pw@\(lan):\(proxy.port)",
                                                 "http://\(host):\(origin.port)/echo/x"])
                XCTAssertNotEqual(result.exitCode, 0, "\(host): \(result.summary)")
                XCTAssertTrue(result.stderr.contains("SOCKS5 connection to \(host). (2)"), "reply 0x02, not allowed: \(result.stderr)")
            }
            XCTAssertEqual(origin.log.requests.count, 0)
            let flows = try await proxy.waitForFlows(count: 3)
            for flow in flows {
                XCTAssertTrue(flow.error?.contains("--allow-internal") == true, flow.error ?? "nil")
            }
        }
    }

    /// A SOCKS5 UDP relay for a client from elsewhere never sends to this machine's own
    /// services either: its datagrams to loopback or to this machine's address are dropped.
    func testSOCKSUDPFromElsewhereIsGuarded() async throws {
        let echo = try await UDPEchoServer.start()
        defer { Task { await echo.shutdown() } }
        try await run(Self.withAuth) { proxy, _, lan in
            let control = try RawClient(port: proxy.port, host: lan)
            let wire = SOCKS5Wire(client: control)
            XCTAssertEqual(try wire.greet([0x02]), 0x02)
            XCTAssertTrue(try wire.login("phone", "pw"))
            try control.send(SOCKS5Wire.requestBytes(0x03, host: "0.0.0.0", port: 0))
            let (reply, _, relayPort) = try wire.readReplyAndAddress()
            XCTAssertEqual(reply, SOCKS5Wire.Reply.succeeded.rawValue)
            let client = try UDPClientSocket(host: lan)
            for host in ["127.0.0.1", lan] {
                client.send(SOCKS5Wire.datagramHeader(host: host, port: echo.port) + Data("x".utf8), toPort: relayPort)
            }
            XCTAssertNil(client.receive(timeout: 1))
            XCTAssertEqual(echo.datagramsReceived, 0)
            control.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertTrue(flow?.note?.contains("2 dropped") == true, flow?.note ?? "nil")
            XCTAssertTrue(flow?.note?.contains("--allow-internal") == true, flow?.note ?? "nil")
        }
    }
}
