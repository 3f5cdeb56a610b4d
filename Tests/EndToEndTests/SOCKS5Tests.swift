import ChildProcess
import Foundation
import ProxyCore
import ProxyEngine
import ProxyModel
import XCTest

/// SOCKS5 on the proxy's one port: curl's `socks5h://` and `socks5://` for plain HTTP (captured)
/// and HTTPS (decrypted), an opaque protocol relayed and recorded, RFC 1929 logins with `--auth`,
/// and every refusal as the reply code a SOCKS client understands, with a flow saying why.
final class SOCKS5Tests: XCTestCase {
    private static let password = "s0cks:Pa55"

    private static func withAuth(_ configuration: inout ProxyConfiguration) {
        configuration.access.credentials.add(user: "phone", password: password)
    }

    private static func socksURL(_ port: Int, login: Bool = true, remoteDNS: Bool = true) -> String {
        let scheme = remoteDNS ? "socks5h" : "socks5"
        let user = login ? "phone:\(password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)@" : ""
        return "\(scheme)://\(user)127.0.0.1:\(port)"
    }

    /// A raw client that has greeted, logged in (when `login`) and asked to CONNECT.
    private func connect(_ port: Int, login: Bool, host: String, targetPort: Int) throws -> (RawClient, UInt8) {
        let client = try RawClient(port: port)
        let wire = SOCKS5Wire(client: client)
        XCTAssertEqual(try wire.greet(login ? [0x02] : [0x00]), login ? 0x02 : 0x00)
        if login { XCTAssertTrue(try wire.login("phone", Self.password)) }
        return (client, try wire.request(host: host, port: targetPort))
    }

    // MARK: curl

    func testCurlPlainHTTPIsProxiedAndCaptured() async throws {
        try await InterceptingFixture.run(configure: Self.withAuth) { fixture in
            for remoteDNS in [true, false] {
                let url = "http://127.0.0.1:\(fixture.origin.port)/echo/socks-\(remoteDNS)"
                let fetched = try await Curl.fetch(proxy: Self.socksURL(fixture.proxy.port, remoteDNS: remoteDNS), url,
                                                   ["--data-binary", "socks-\(remoteDNS)"])
                XCTAssertEqual(fetched.status, 200, fetched.result.summary)
                XCTAssertEqual(fetched.bodyText, "socks-\(remoteDNS)")
            }
            XCTAssertEqual(fixture.origin.log.requests.count, 2)
            let flows = try await fixture.proxy.waitForFlows(count: 2).filter { $0.kind == .http }
            XCTAssertEqual(flows.map(\.path).sorted(), ["/echo/socks-false", "/echo/socks-true"])
            XCTAssertEqual(flows.map(\.status), [200, 200])
        }
    }

    func testCurlHTTPSIsDecrypted() async throws {
        try await InterceptingFixture.run(configure: Self.withAuth) { fixture in
            let fetched = try await Curl.fetch(proxy: Self.socksURL(fixture.proxy.port), fixture.tlsURL("/echo/secret"),
                                               ["--cacert", fixture.tls.proxyCAFile.path, "--data-binary", "secret"])
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.bodyText, "secret")
            let flow = try await fixture.proxy.waitForFlows(count: 1).first { $0.path == "/echo/secret" }
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertEqual(flow?.host, "localhost")
            XCTAssertEqual(flow?.status, 200)
        }
    }

    func testCurlWithWrongPasswordIsRefusedAndReachesNothing() async throws {
        try await InterceptingFixture.run(configure: Self.withAuth) { fixture in
            let url = "http://127.0.0.1:\(fixture.origin.port)/echo/x"
            for proxy in ["socks5h://phone:wrong@127.0.0.1:\(fixture.proxy.port)", Self.socksURL(fixture.proxy.port, login: false)] {
                let result = try await Curl.run(["-x", proxy, url])
                XCTAssertNotEqual(result.exitCode, 0, "\(proxy): \(result.summary)")
                XCTAssertTrue(result.stderr.lowercased().contains("auth") || result.stderr.contains("SOCKS"), result.stderr)
            }
            XCTAssertEqual(fixture.origin.log.requests.count, 0)
        }
    }

    /// PySocks (Debian's python3-socks, installed by scripts/test), the SOCKS library of many
    /// Python tools: a login, a name the proxy resolves, a POST proxied and captured.
    func testPySocksClient() async throws {
        let script = """
            import sys
            import socks
            s = socks.socksocket()
            s.set_proxy(socks.SOCKS5, "127.0.0.1", int(sys.argv[1]), rdns=True, username="phone", password=sys.argv[3])
            s.settimeout(10)
            s.connect(("localhost", int(sys.argv[2])))
            s.sendall(b"POST /echo/py HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Length: 6\\r\\nConnection: close\\r\\n\\r\\npysock")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            sys.stdout.write(data.decode("latin-1"))
            """
        try await InterceptingFixture.run(configure: Self.withAuth) { fixture in
            let outcome = try await ChildProcess.run(
                "/usr/bin/python3", ["-c", script, "\(fixture.proxy.port)", "\(fixture.origin.port)", Self.password], timeout: 20)
            let errors = String(decoding: outcome.stderr, as: UTF8.self)
            XCTAssertFalse(errors.contains("No module named 'socks'"), "install Debian's python3-socks (scripts/test does)")
            let output = String(decoding: outcome.stdout, as: UTF8.self)
            XCTAssertTrue(output.hasPrefix("HTTP/1.1 200"), output + errors)
            XCTAssertTrue(output.hasSuffix("pysock"), output)
            let flow = try await fixture.proxy.waitForFlows(count: 1).first { $0.path == "/echo/py" }
            XCTAssertEqual(flow?.method, "POST")
            XCTAssertEqual(flow?.status, 200)
        }
    }

    // MARK: opaque protocols

    func testOpaqueProtocolIsRelayedAndRecordedWhenIntercepting() async throws {
        let echo = try await TCPEchoServer.start()
        do {
            try await InterceptingFixture.run(configure: Self.withAuth) { fixture in
                // The protocol's first bytes in the same write as the request: relayed, not lost.
                let client = try RawClient(port: fixture.proxy.port)
                let wire = SOCKS5Wire(client: client)
                XCTAssertEqual(try wire.greet([0x02]), 0x02)
                XCTAssertTrue(try wire.login("phone", Self.password))
                let message = Data([0x00, 0x01, 0xFE, 0xFF] + Array("binary protocol".utf8))
                try client.send(SOCKS5Wire.requestBytes(host: "127.0.0.1", port: echo.port) + message)
                XCTAssertEqual(try wire.readReply(), SOCKS5Wire.Reply.succeeded.rawValue)
                XCTAssertEqual(try client.receive(count: message.count, timeout: 10), message)
                client.close()
                let flow = try await fixture.proxy.waitForFlows(count: 1).first
                XCTAssertEqual(flow?.kind, .tunnel)
                XCTAssertEqual(flow?.httpVersion, "SOCKS/5")
                XCTAssertEqual(flow?.bytesUp, Int64(message.count))
                XCTAssertEqual(flow?.bytesDown, Int64(message.count))
                XCTAssertTrue(flow?.note?.contains("logged in as phone") == true, flow?.note ?? "nil")
            }
        } catch {
            await echo.shutdown()
            throw error
        }
        await echo.shutdown()
    }

    /// Without interception the target is dialled before the reply; bytes sent with the request
    /// are relayed, not lost.
    func testWithoutInterceptionTheTunnelIsRelayed() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            let wire = SOCKS5Wire(client: client)
            XCTAssertEqual(try wire.greet([0x00, 0x02]), 0x00, "no login is asked of a loopback client without --auth")
            try client.send(SOCKS5Wire.requestBytes(host: "localhost", port: echo.port) + Data("early".utf8))
            XCTAssertEqual(try wire.readReply(), SOCKS5Wire.Reply.succeeded.rawValue)
            XCTAssertEqual(try client.receive(count: 5, timeout: 10), Data("early".utf8))
            let bulk = Data(repeating: 0x5A, count: 300_000)
            try client.send(bulk)
            XCTAssertEqual(try client.drain(count: bulk.count, timeout: 20), bulk.count)
            client.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.kind, .tunnel)
            XCTAssertEqual(flow?.method, "CONNECT")
            XCTAssertEqual(flow?.host, "localhost")
            XCTAssertEqual(flow?.port, echo.port)
            XCTAssertEqual(flow?.status, 200)
            XCTAssertEqual(flow?.bytesUp, Int64(bulk.count + 5))
            XCTAssertNil(flow?.error)
        }
    }

    /// IPv6 address type: a v4-mapped address reaches the IPv4 echo server.
    func testIPv6AddressType() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let (client, reply) = try connect(proxy.port, login: false, host: "::ffff:127.0.0.1", targetPort: echo.port)
            XCTAssertEqual(reply, SOCKS5Wire.Reply.succeeded.rawValue)
            try client.send("v6")
            XCTAssertEqual(try client.receive(count: 2, timeout: 10), Data("v6".utf8))
            client.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.port, echo.port)
            XCTAssertNil(flow?.error)
        }
    }

    /// A client that sends its request with its greeting, without waiting for the method answer.
    func testRequestSentWithTheGreetingIsServed() async throws {
        try await Fixture.withTunnelTarget { proxy, echo in
            let client = try RawClient(port: proxy.port)
            try client.send(Data([0x05, 0x01, 0x00]) + SOCKS5Wire.requestBytes(host: "127.0.0.1", port: echo.port) + Data("eager".utf8))
            XCTAssertEqual(try client.receive(count: 2, timeout: 10), Data([0x05, 0x00]))
            XCTAssertEqual(try SOCKS5Wire(client: client).readReply(), SOCKS5Wire.Reply.succeeded.rawValue)
            XCTAssertEqual(try client.receive(count: 5, timeout: 10), Data("eager".utf8))
        }
    }

    // MARK: logins

    func testLoginIsRequiredWithAuthAndCheckedSplitAnywhere() async throws {
        try await Fixture.run(Self.withAuth) { proxy, _ in
            // Only "no login" offered: no acceptable method, then closed.
            let anonymous = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: anonymous).greet([0x00]), 0xFF)
            XCTAssertTrue(try anonymous.readUntilClose(timeout: 5))
            // A wrong password: failure status, then closed.
            let wrong = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: wrong).greet([0x00, 0x02]), 0x02)
            XCTAssertFalse(try SOCKS5Wire(client: wrong).login("phone", "nope"))
            XCTAssertTrue(try wrong.readUntilClose(timeout: 5))
            // The right one, a byte per write.
            let right = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: right).greet([0x02]), 0x02)
            for byte in SOCKS5Wire.loginBytes("phone", Self.password) {
                try right.send(Data([byte]))
            }
            XCTAssertEqual(try right.receive(count: 2, timeout: 10), Data([0x01, 0x00]))
            right.close()
            // No flow for a client that never asked for a destination.
            XCTAssertEqual(try proxy.flushedFlows().count, 0)
        }
    }

    func testWithoutAuthOnlyNoLoginIsOffered() async throws {
        try await Fixture.run { proxy, _ in
            let client = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: client).greet([0x02]), 0xFF)
            XCTAssertTrue(try client.readUntilClose(timeout: 5))
        }
    }

    // MARK: refusals

    func testBindAndUnknownCommandsAreNotSupported() async throws {
        try await Fixture.run { proxy, _ in
            for command: UInt8 in [0x02, 0x09] {
                let client = try RawClient(port: proxy.port)
                XCTAssertEqual(try SOCKS5Wire(client: client).greet([0x00]), 0x00)
                let reply = try SOCKS5Wire(client: client).request(command, host: "127.0.0.1", port: 9)
                XCTAssertEqual(reply, SOCKS5Wire.Reply.commandUnsupported.rawValue, "command \(command)")
                XCTAssertTrue(try client.readUntilClose(timeout: 5))
            }
            let errors = try await proxy.waitForFlows(count: 2).compactMap(\.error)
            XCTAssertEqual(errors.count, 2)
            XCTAssertTrue(errors.contains { $0.contains("BIND is not supported") }, "\(errors)")
            XCTAssertTrue(errors.contains { $0.contains("command 9 is not supported") }, "\(errors)")
        }
    }

    func testFailuresAreTheirReplyCodesAndFlows() async throws {
        try await Fixture.run { proxy, _ in
            let closed = try ListeningSocket.refusing()
            defer { closed.close() }
            let cases: [(host: String, port: Int, reply: SOCKS5Wire.Reply, error: String)] = [
                ("127.0.0.1", closed.port, .refused, "connection refused"),
                ("no-such-host.invalid", 80, .hostUnreachable, "cannot resolve host 'no-such-host.invalid'"),
                ("127.0.0.1", 0, .addressUnsupported, "is not a host and port"),
                ("bad host!", 80, .addressUnsupported, "is not a host and port"),
            ]
            for (host, port, reply, _) in cases {
                let (client, code) = try connect(proxy.port, login: false, host: host, targetPort: port)
                XCTAssertEqual(code, reply.rawValue, "\(host):\(port)")
                XCTAssertTrue(try client.readUntilClose(timeout: 5), "\(host):\(port) left open")
            }
            let flows = try await proxy.waitForFlows(count: cases.count)
            for (host, port, _, error) in cases {
                let flow = flows.first { $0.host == host && $0.port == port }
                XCTAssertTrue(flow?.error?.contains(error) == true, "\(host):\(port): \(flow?.error ?? "no flow")")
            }
        }
    }

    func testBlockRuleIsNotAllowed() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: No ads
                    match: { host: "*.ads.test" }
                    block: {}
                """)
            let (client, code) = try connect(fixture.proxy.port, login: false, host: "pixel.ads.test", targetPort: 443)
            XCTAssertEqual(code, SOCKS5Wire.Reply.notAllowed.rawValue)
            XCTAssertTrue(try client.readUntilClose(timeout: 5))
            let flow = try await fixture.proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.appliedRules, ["No ads"])
            XCTAssertTrue(flow?.error?.contains("blocked by rule 'No ads'") == true, flow?.error ?? "nil")
        }
    }

    /// SOCKS4 and SOCKS4a have no login: refused in their own protocol ("request rejected").
    func testSOCKS4IsRefusedInItsOwnWords() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send(Data([0x04, 0x01, UInt8(origin.port >> 8), UInt8(origin.port & 0xFF), 127, 0, 0, 1, 0]))
            XCTAssertEqual(try client.receive(count: 8, timeout: 10), Data([0x00, 0x5B, 0, 0, 0, 0, 0, 0]))
            XCTAssertTrue(try client.readUntilClose(timeout: 5))
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    // MARK: hostile clients

    /// A client that stops mid-handshake is closed after the idle timeout; one that breaks the
    /// protocol is closed at once; neither holds up a client served meanwhile.
    func testStalledAndBrokenHandshakesAreClosed() async throws {
        try await Fixture.run({ $0.clientIdleTimeout = .milliseconds(500) }) { proxy, origin in
            let stalledAtVersion = try RawClient(port: proxy.port)
            try stalledAtVersion.send(Data([0x05]))
            let stalledAfterGreeting = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: stalledAfterGreeting).greet([0x00]), 0x00)
            let broken = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: broken).greet([0x00]), 0x00)
            try broken.send(Data([0x04, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0, 80]))  // version 4 inside SOCKS5
            XCTAssertTrue(try broken.readUntilClose(timeout: 5))
            let badAddressType = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: badAddressType).greet([0x00]), 0x00)
            try badAddressType.send(Data([0x05, 0x01, 0x00, 0x07, 1, 2, 3]))
            XCTAssertTrue(try badAddressType.readUntilClose(timeout: 5))

            let served = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo/meanwhile")
            XCTAssertEqual(served.status, 200, served.result.summary)
            XCTAssertTrue(try stalledAtVersion.readUntilClose(timeout: 10))
            XCTAssertTrue(try stalledAfterGreeting.readUntilClose(timeout: 10))
        }
    }

    /// The longest login RFC 1929 allows with bytes after it, and an empty user name: refused
    /// with the failure status and closed, nothing buffered past the login's 513 bytes.
    func testOverlongAndEmptyLoginsAreRefused() async throws {
        try await Fixture.run(Self.withAuth) { proxy, _ in
            let long = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: long).greet([0x02]), 0x02)
            try long.send(Data([0x01, 0xFF] + [UInt8](repeating: 0x41, count: 255) + [0xFF]
                               + [UInt8](repeating: 0x42, count: 255 + 10_000)))
            XCTAssertEqual(try long.receive(count: 2, timeout: 10), Data([0x01, 0x01]))
            XCTAssertTrue(try long.readUntilClose(timeout: 5))

            let empty = try RawClient(port: proxy.port)
            XCTAssertEqual(try SOCKS5Wire(client: empty).greet([0x02]), 0x02)
            try empty.send(Data([0x01, 0x00, 0x00]))
            XCTAssertEqual(try empty.receive(count: 2, timeout: 10), Data([0x01, 0x01]))
            XCTAssertTrue(try empty.readUntilClose(timeout: 5))
        }
    }
}
