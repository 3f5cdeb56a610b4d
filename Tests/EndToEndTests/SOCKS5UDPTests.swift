import FakeDNS
import Foundation
import ProxyEngine
import ProxyModel
import Rules
import RulesFile
import XCTest

/// SOCKS5 `UDP ASSOCIATE`: datagrams relayed both ways behind RFC 1928's header, only for the
/// client that asked, each destination decided once (rules, DNS), fragments and junk dropped
/// and counted, and the association one flow when its control connection closes or idles out.
final class SOCKS5UDPTests: XCTestCase {
    /// An association opened on a raw control connection: the control client and the relay's port.
    private func associate(_ proxyPort: Int, from clientPort: Int = 0) throws -> (RawClient, Int) {
        let control = try RawClient(port: proxyPort)
        let wire = SOCKS5Wire(client: control)
        XCTAssertEqual(try wire.greet([0x00]), 0x00)
        try control.send(SOCKS5Wire.requestBytes(0x03, host: "127.0.0.1", port: clientPort))
        let (reply, address, port) = try wire.readReplyAndAddress()
        XCTAssertEqual(reply, SOCKS5Wire.Reply.succeeded.rawValue)
        XCTAssertEqual(address, [127, 0, 0, 1], "the relay listens where the client reached the proxy")
        XCTAssertNotEqual(port, 0)
        return (control, port)
    }

    private func withEcho(rules: LiveRules = LiveRules(), _ configure: @escaping (inout ProxyConfiguration) -> Void = { _ in },
                          _ body: (ProxyHarness, UDPEchoServer) async throws -> Void) async throws {
        let echo = try await UDPEchoServer.start()
        do {
            try await Fixture.run(rules: rules, configure) { proxy, _ in try await body(proxy, echo) }
        } catch {
            await echo.shutdown()
            throw error
        }
        await echo.shutdown()
    }

    func testDatagramsAreRelayedBothWaysAndRecorded() async throws {
        try await withEcho { proxy, echo in
            let (control, relayPort) = try associate(proxy.port)
            let client = try UDPClientSocket()
            for message in ["ping", String(repeating: "x", count: 8_000)] {
                client.send(SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data(message.utf8), toPort: relayPort)
                let answer = try XCTUnwrap(client.receive(timeout: 10), "no answer relayed for \(message.prefix(10))")
                let header = SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port)
                XCTAssertEqual(answer.prefix(header.count), header, "the answer names its source")
                XCTAssertEqual(String(decoding: answer.dropFirst(header.count), as: UTF8.self), "echo:" + message)
            }
            control.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.method, "UDP")
            XCTAssertEqual(flow?.scheme, "udp")
            XCTAssertEqual(flow?.status, 200)
            XCTAssertEqual(flow?.reason, "UDP relay established")
            XCTAssertEqual(flow?.host, "127.0.0.1")
            XCTAssertEqual(flow?.port, echo.port)
            XCTAssertEqual(flow?.bytesUp, 8_004)
            XCTAssertEqual(flow?.bytesDown, 8_004 + 10)
            XCTAssertTrue(flow?.note?.contains("2 datagrams up, 2 down") == true, flow?.note ?? "nil")
            XCTAssertNil(flow?.error)
        }
    }

    /// A dual-stack listener (`::`) sees an IPv4 client at `::ffff:127.0.0.1`: the relay is
    /// still bound, and named in the reply, as the IPv4 address the client can send to.
    func testDualStackListenerAnswersWithTheIPv4Address() async throws {
        try await withEcho({ $0.listenHost = "::" }) { proxy, echo in
            let (control, relayPort) = try associate(proxy.port)
            let client = try UDPClientSocket()
            client.send(SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data("v4".utf8), toPort: relayPort)
            let answer = try XCTUnwrap(client.receive(timeout: 10))
            XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasSuffix("echo:v4"))
            control.close()
        }
    }

    /// Names go through the rules' `dns` and the resolver; a name that does not resolve, a block
    /// rule, a fragment and a broken header drop their datagrams, and the flow says why.
    func testDestinationsAreDecidedByRulesAndDNS() async throws {
        let rules = LiveRules()
        try await withEcho(rules: rules) { proxy, echo in
            rules.replace(with: try RulesFile.parse("""
                rules:
                  - name: Echo by name
                    match: { host: echo.test }
                    dns: { to: [127.0.0.1] }
                  - name: No telemetry
                    match: { host: "*.telemetry.test" }
                    block: {}
                """, file: "rules.yml", baseDirectory: "/"), source: "rules.yml")
            let (control, relayPort) = try associate(proxy.port)
            let client = try UDPClientSocket()
            client.send(SOCKS5Wire.datagramHeader(host: "echo.test", port: echo.port) + Data("named".utf8), toPort: relayPort)
            let answer = try XCTUnwrap(client.receive(timeout: 10))
            XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasSuffix("echo:named"))

            var fragment = SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data("frag".utf8)
            fragment[2] = 1
            for datagram in [SOCKS5Wire.datagramHeader(host: "x.telemetry.test", port: echo.port) + Data("t".utf8),
                             SOCKS5Wire.datagramHeader(host: "nothing.invalid", port: echo.port) + Data("n".utf8),
                             fragment, Data([0, 0, 0, 0x09, 1, 2])] {
                client.send(datagram, toPort: relayPort)
            }
            XCTAssertNil(client.receive(timeout: 1), "nothing dropped may be answered")
            XCTAssertEqual(echo.datagramsReceived, 1)
            control.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(Set(flow?.appliedRules ?? []), ["Echo by name", "No telemetry"])
            let note = flow?.note ?? ""
            XCTAssertTrue(note.contains("1 datagrams up, 1 down, 4 dropped"), note)
            XCTAssertTrue(note.contains("blocked by rule 'No telemetry'"), note)
            XCTAssertTrue(note.contains("nothing.invalid"), note)
        }
    }

    /// Only the client that opened the association may send through it: another socket on the
    /// same machine but another port (once the client's port is known) is ignored.
    func testOnlyTheAssociatedClientIsRelayed() async throws {
        try await withEcho { proxy, echo in
            let client = try UDPClientSocket()
            let (control, relayPort) = try associate(proxy.port, from: client.port)
            let stranger = try UDPClientSocket()
            stranger.send(SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data("intruder".utf8), toPort: relayPort)
            XCTAssertNil(stranger.receive(timeout: 1))
            client.send(SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data("mine".utf8), toPort: relayPort)
            XCTAssertNotNil(client.receive(timeout: 10))
            XCTAssertEqual(echo.datagramsReceived, 1)
            control.close()
        }
    }

    /// The association ends when its control connection closes (later datagrams go nowhere),
    /// or after the idle timeout without a datagram (the control connection is closed).
    func testAssociationEndsWithItsControlConnectionOrIdle() async throws {
        try await withEcho({ $0.clientIdleTimeout = .milliseconds(600) }) { proxy, echo in
            let (control, relayPort) = try associate(proxy.port)
            control.close()
            _ = try await proxy.waitForFlows(count: 1)
            let client = try UDPClientSocket()
            client.send(SOCKS5Wire.datagramHeader(host: "127.0.0.1", port: echo.port) + Data("late".utf8), toPort: relayPort)
            XCTAssertNil(client.receive(timeout: 1))
            XCTAssertEqual(echo.datagramsReceived, 0)

            let (idle, _) = try associate(proxy.port)
            XCTAssertTrue(try idle.readUntilClose(timeout: 10), "an idle association is closed")
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.filter { $0.method == "UDP" }.count, 2)
        }
    }

    /// Datagrams waiting for names that never resolve are bounded per association (64 in all),
    /// the rest dropped and counted; a destination already resolved is still relayed.
    func testDatagramsWaitingForDNSAreBounded() async throws {
        let dns = try await FakeDNSServer.start { name in
            name == "echo.test" ? .addresses(["127.0.0.1"]) : name.hasSuffix(".silent.test") ? .silence : .failure(rcode: 3)
        }
        let resolver = try SystemHostResolver(configuration: .init(timeout: .seconds(20), servers: [dns.address]))
        let echo = try await UDPEchoServer.start()
        let proxy = try await ProxyHarness.start(resolver: resolver)
        func cleanUp() async {
            await proxy.shutdown()
            await echo.shutdown()
            await dns.shutdown()
        }
        do {
            let (control, relayPort) = try associate(proxy.port)
            let client = try UDPClientSocket()
            client.send(SOCKS5Wire.datagramHeader(host: "echo.test", port: echo.port) + Data("first".utf8), toPort: relayPort)
            XCTAssertNotNil(client.receive(timeout: 10))
            for name in 0..<20 {
                for _ in 0..<5 {
                    client.send(SOCKS5Wire.datagramHeader(host: "n\(name).silent.test", port: 53) + Data(count: 512),
                                toPort: relayPort)
                }
            }
            client.send(SOCKS5Wire.datagramHeader(host: "echo.test", port: echo.port) + Data("meanwhile".utf8), toPort: relayPort)
            let answer = try XCTUnwrap(client.receive(timeout: 10), "a destination already resolved is not held up")
            XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasSuffix("echo:meanwhile"))
            control.close()
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertTrue(flow?.note?.contains("2 datagrams up, 2 down, 36 dropped (too many datagrams waiting for DNS)") == true,
                          flow?.note ?? "nil")
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }
}
