import ChildProcess
import Foundation
import XCTest

/// Issue 13, the client side of interception, attacked end to end: a slow client, a ClientHello
/// with record version 0x0300, who speaks first.
final class InterceptionHardeningTests: XCTestCase {
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
                try await Task.sleep(nanoseconds: 2_500_000_000)
                try client.send("hi")
                XCTAssertEqual(try client.receive(count: 2, timeout: 10), Data("hi".utf8))
                client.close()
                let flow = try await fixture.proxy.waitForFlows(count: 1).last
                XCTAssertEqual(flow?.note, "relayed untouched: neither side sent anything within 2 s")
            }
        } catch {
            await echo.shutdown()
            throw error
        }
        XCTAssertEqual(echo.acceptedConnections, 1, "the connection dialled while the client was silent is the one relayed")
        await echo.shutdown()
    }
}
