import ChildProcess
import Foundation
import ProxyCore
import XCTest

/// Issue 13, the client side of interception, attacked end to end: the one-packet pin attack,
/// real rejections and their notes, the bounds on pins, a slow client, a ClientHello with record
/// version 0x0300, who speaks first, and a wildcard CONNECT host.
final class InterceptionHardeningTests: XCTestCase {
    // MARK: pins

    /// Was: one packet (a TLS 1.3 ClientHello naming www.paypal.com and a junk record, after
    /// `CONNECT 127.0.0.1:9`) pinned www.paypal.com for everyone for 7 days. The junk was sent
    /// before the client could have read our certificate: nothing is pinned.
    func testOnePacketPinAttackPinsNothing() async throws {
        try await InterceptingFixture.run(pinLimits: .init()) { fixture in
            let pins = try XCTUnwrap(fixture.pins)
            for name in ["www.paypal.com", "bank.example", "www.paypal.com"] {
                let attack = try await ScriptedTLSClient.run(.helloAndJunk, port: fixture.proxy.port, serverName: name,
                                                             connectTarget: "127.0.0.1:9")
                XCTAssertEqual(attack.exitCode, 0, attack.errors)
            }
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            XCTAssertEqual(flows.count, 3)
            for flow in flows {
                XCTAssertNil(flow.note, "no pin: \(String(describing: flow.note))")
                XCTAssertTrue(flow.error?.contains("not a pin signal") ?? false, "\(String(describing: flow.error))")
                // In words, BoringSSL's names only in parentheses (the error once was just them).
                XCTAssertTrue(flow.error?.hasPrefix("TLS handshake with the client failed: the client sent bytes that are no valid "
                                                    + "TLS record (") ?? false, "\(String(describing: flow.error))")
            }
            XCTAssertNil(pins.pins(for: "www.paypal.com").first)
            XCTAssertNil(pins.pins(for: "bank.example").first)
            pins.flush()
            XCTAssertEqual(try fixture.proxy.repository.pinnedDomains(), [])
        }
    }

    /// An alert sent with the hello, before our certificate, pins nothing either.
    func testAlertBeforeOurCertificatePinsNothing() async throws {
        try await InterceptingFixture.run(pinLimits: .init()) { fixture in
            let attack = try await ScriptedTLSClient.run(.helloAndAlert, port: fixture.proxy.port, serverName: "a.example",
                                                         connectTarget: "127.0.0.1:9")
            XCTAssertEqual(attack.exitCode, 0, attack.errors)
            _ = try await fixture.proxy.waitForFlows(count: 1)
            XCTAssertNil(fixture.pins?.pins(for: "a.example").first)
        }
    }

    /// A real rejection (the alert after our flight, as an OpenSSL client on TLS 1.3 sends it)
    /// from a client that trusted us before pins the SNI's host for it, and the CONNECT flow,
    /// whose host is 127.0.0.1, names it, the client, why, and how to undo it.
    func testRealRejectionPinsAndTheFlowNamesTheHost() async throws {
        try await InterceptingFixture.run(pinLimits: .init()) { fixture in
            try await Self.trustTheProxy(fixture)
            let client = try await ScriptedTLSClient.run(.alertAfterFlight, port: fixture.proxy.port,
                                                         serverName: "www.paypal.com", connectTarget: "127.0.0.1:9")
            XCTAssertEqual(client.exitCode, 0, client.errors)
            let flow = try await fixture.proxy.waitForFlows(count: 2).last
            XCTAssertEqual(flow?.host, "127.0.0.1")
            let pinned = try XCTUnwrap(fixture.pins?.pins(for: "www.paypal.com").first?.client)
            XCTAssertEqual(pinned.address, "127.0.0.1")
            XCTAssertEqual(flow?.note, "pinned www.paypal.com for \(pinned): client sent unknown_ca after our certificate "
                           + "(TLS 1.3); to undo: `p` in the TUI, or `proxyapp pins remove www.paypal.com`")
            let pin = try XCTUnwrap(fixture.pins?.pins(for: "www.paypal.com").first)
            XCTAssertTrue(pin.evidence.contains("after it the client sent fatal unknown_ca alert (unencrypted)"), pin.evidence)
        }
    }

    /// Many hosts rejected by one client: only `--pin-rate` new pins a minute, the table never
    /// past `--max-pins`, and the refusals noted on the flows.
    func testPinsFromOneClientAreBounded() async throws {
        try await InterceptingFixture.run(pinLimits: .init(maximumPins: 3, newPinsPerClientPerMinute: 2)) { fixture in
            let pins = try XCTUnwrap(fixture.pins)
            try await Self.trustTheProxy(fixture)
            let hosts = (0..<5).map { "h\($0).example" }
            for host in hosts {
                let client = try await ScriptedTLSClient.run(.alertAfterFlight, port: fixture.proxy.port, serverName: host,
                                                             connectTarget: "127.0.0.1:9")
                XCTAssertEqual(client.exitCode, 0, client.errors)
            }
            let flows = try await fixture.proxy.waitForFlows(count: 6)
            XCTAssertEqual(flows.compactMap(\.note).filter { $0.hasPrefix("pinned ") }.count, 2)
            XCTAssertEqual(flows.compactMap(\.note).filter {
                $0 == "not pinned: 127.0.0.1 made 2 new pins in the last minute (--pin-rate)"
            }.count, 3)
            XCTAssertEqual(hosts.filter { !pins.pins(for: $0).isEmpty }, ["h0.example", "h1.example"])
            pins.flush()
            XCTAssertLessThanOrEqual(try fixture.proxy.repository.pinnedDomains().count, 3)
        }
    }

    /// The scripted client completes a handshake through the proxy (trusting its CA), with the
    /// ClientHello its other modes send: from then on it is a client that trusts the proxy.
    static func trustTheProxy(_ fixture: InterceptingFixture, sourceAddress: String = "") async throws {
        let client = try await ScriptedTLSClient.run(
            .handshake, port: fixture.proxy.port, serverName: "localhost", connectTarget: "localhost:\(fixture.tlsOrigin.port)",
            caFile: fixture.tls.proxyCAFile.path, sourceAddress: sourceAddress)
        XCTAssertEqual(client.exitCode, 0, client.errors)
        XCTAssertEqual(client.line, "HTTP/1.1 200 OK", "the handshake with the proxy completed")
    }

    // MARK: who speaks first

    /// Was relayed undecrypted, without a note: a client on a slow link whose ClientHello comes
    /// 1.5 s after the 200 (past the old 1 s timer). Its hello still decides: intercepted.
    func testSlowClientIsStillIntercepted() async throws {
        try await InterceptingFixture.run { fixture in
            let client = try await ScriptedTLSClient.run(
                .slowHandshake, port: fixture.proxy.port, serverName: "localhost",
                connectTarget: "localhost:\(fixture.tlsOrigin.port)", caFile: fixture.tls.proxyCAFile.path, delay: 1.5)
            XCTAssertEqual(client.exitCode, 0, client.errors)
            XCTAssertEqual(client.line, "HTTP/1.1 200 OK", "the proxy's certificate verified: decrypted")
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.scheme, "https")
            XCTAssertEqual(flow?.status, 200)
        }
    }

    /// Was relayed undecrypted: a ClientHello whose record version is 0x0300 (RFC 5246
    /// Appendix E allows it). Now the proxy answers with its own ServerHello; a relay to the
    /// echo target would have sent the hello back.
    func testRecordVersion0300HelloIsIntercepted() async throws {
        let echo = try await TCPEchoServer.start()
        do {
            try await InterceptingFixture.run { fixture in
                let client = try await ScriptedTLSClient.run(.recordVersion0300, port: fixture.proxy.port,
                                                             serverName: "old.example", connectTarget: "127.0.0.1:\(echo.port)")
                XCTAssertEqual(client.exitCode, 0, client.errors)
                XCTAssertTrue(client.line.hasPrefix("160303") && client.line.hasSuffix("02"),
                              "expected our ServerHello (16 03 03 .. .. 02), got \(client.line)")
            }
        } catch {
            await echo.shutdown()
            throw error
        }
        XCTAssertEqual(echo.acceptedConnections, 0, "the target was never dialled: nothing was relayed")
        await echo.shutdown()
    }

    /// A server that speaks first gets a relay, noted on the flow.
    func testServerSpeakingFirstIsRelayedWithANote() async throws {
        let greeter = try await TCPEchoServer.start(greeting: "220 smtp.test ESMTP ready\r\n")
        do {
            try await InterceptingFixture.run { fixture in
                let client = try RawClient(port: fixture.proxy.port)
                try client.send("CONNECT 127.0.0.1:\(greeter.port) HTTP/1.1\r\nHost: x\r\n\r\n")
                XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
                XCTAssertEqual(try client.receive(count: 27, timeout: 10), Data("220 smtp.test ESMTP ready\r\n".utf8))
                client.close()
                let flow = try await fixture.proxy.waitForFlows(count: 1).last
                XCTAssertEqual(flow?.note, "relayed untouched: the server spoke first")
            }
        } catch {
            await greeter.shutdown()
            throw error
        }
        await greeter.shutdown()
    }

    /// Neither side says anything: relayed at the deadline, noted; the tunnel then works.
    func testSilenceOnBothSidesIsRelayedAtTheDeadline() async throws {
        let echo = try await TCPEchoServer.start()
        do {
            try await InterceptingFixture.run(firstBytesTimeout: 2) { fixture in
                let client = try RawClient(port: fixture.proxy.port)
                try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: x\r\n\r\n")
                XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
                // Nothing the client can see marks the deadline: wait it out with a wide margin
                // (2.5 s past it), so "hi" is never taken for the client's first bytes.
                try await Task.sleep(nanoseconds: 4_500_000_000)
                try client.send("hi")
                XCTAssertEqual(try client.receive(count: 2, timeout: 10), Data("hi".utf8))
                client.close()
                let flow = try await fixture.proxy.waitForFlows(count: 1).last
                XCTAssertEqual(flow?.note, "relayed untouched: neither side sent anything within 2 s",
                               "the deadline must have passed before the client spoke")
            }
        } catch {
            await echo.shutdown()
            throw error
        }
        XCTAssertEqual(echo.acceptedConnections, 1, "the connection dialled while the client was silent is the one relayed")
        await echo.shutdown()
    }

    // MARK: CONNECT hosts

    /// Was: `CONNECT *.com:443` without SNI got a `*.com` certificate minted. A CONNECT host
    /// that is no host name or IP address is refused before anything is minted or dialled.
    func testWildcardConnectHostIsRefused() async throws {
        try await InterceptingFixture.run { fixture in
            for target in ["*.com:443", "*:443", "a.*.example:443", "a*.example:443", "exa$mple.com:443", "a..b:443"] {
                let client = try RawClient(port: fixture.proxy.port)
                try client.send("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n")
                let response = try client.readResponse(noBody: true)
                XCTAssertEqual(response.status, 400, target)
                XCTAssertTrue(response.header("Proxy-Status")?.contains("http_request_error") ?? false, target)
            }
            let flows = try await fixture.proxy.waitForFlows(count: 6)
            XCTAssertTrue(flows.allSatisfy { $0.error?.contains("is not a host name or an IP address") ?? false },
                          "\(flows.map(\.error))")
        }
    }

    /// Names and addresses a certificate can be made for still work (trailing dot, case).
    func testOrdinaryConnectHostsAreAccepted() async throws {
        try await InterceptingFixture.run { fixture in
            for target in ["LOCALHOST.:\(fixture.tlsOrigin.port)", "127.0.0.1:\(fixture.tlsOrigin.port)",
                           "[::1]:\(fixture.tlsOrigin.port)", "under_score.example:443"] {
                let client = try RawClient(port: fixture.proxy.port)
                try client.send("CONNECT \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
                XCTAssertEqual(try client.readResponse(noBody: true).status, 200, target)
            }
        }
    }
}
