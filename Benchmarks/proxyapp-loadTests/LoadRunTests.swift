import NIOCore
import NIOPosix
import XCTest
@testable import proxyapp_load

/// Whole runs against loopback servers: every response the server wrote is counted once, each
/// mode opens the connections it promises, and failures end the run with the reason.
final class LoadRunTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var authority: TestAuthority!
    private var caPath: String!

    override func setUpWithError() throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        authority = try TestAuthority()
        caPath = try authority.writeCA()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: caPath)
        try group.syncShutdownGracefully()
    }

    func testPlainKeepAliveUsesOneConnectionPerWorker() throws {
        let server = try TestServer(mode: .plain, authority: nil, group: group)
        defer { try? server.close() }
        let figures = try run(["--url", "http://127.0.0.1:\(server.port)/x", "--connections", "4"])
        XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
        XCTAssertGreaterThan(figures.completed, 0)
        XCTAssertEqual(figures.responses, server.counted.responses)
        XCTAssertEqual(figures.connections, 4)
        XCTAssertEqual(server.counted.connections, 4)
    }

    func testDirectTLSWithANewConnectionPerRequest() throws {
        let server = try TestServer(mode: .tls, authority: authority, group: group)
        defer { try? server.close() }
        let figures = try run(["--url", "https://127.0.0.1:\(server.port)/x", "--cacert", caPath,
                               "--connections", "3", "--new-connection-per-request"])
        XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
        XCTAssertGreaterThan(figures.completed, 0)
        XCTAssertEqual(figures.responses, server.counted.responses)
        XCTAssertEqual(figures.connections, figures.responses)
        XCTAssertEqual(server.counted.connections, figures.connections)
    }

    /// CONNECT, then TLS with SNI `localhost` inside the tunnel, then keep-alive requests.
    func testTunnelledTLSKeepAlive() throws {
        let server = try TestServer(mode: .tunnelling, authority: authority, group: group)
        defer { try? server.close() }
        let figures = try run(["--url", "https://localhost:\(server.port + 1)/x", "--proxy", "127.0.0.1:\(server.port)",
                               "--cacert", caPath, "--connections", "3", "--warmup", "0.1"])
        XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
        XCTAssertGreaterThan(figures.completed, 0)
        XCTAssertGreaterThan(figures.responses, figures.completed, "warm-up responses count in responses only")
        XCTAssertEqual(figures.responses, server.counted.responses)
        XCTAssertEqual(server.counted.connects, 3)
    }

    func testTunnelledTLSWithANewConnectionPerRequest() throws {
        let server = try TestServer(mode: .tunnelling, authority: authority, group: group)
        defer { try? server.close() }
        let figures = try run(["--url", "https://127.0.0.1:\(server.port + 1)/x", "--proxy", "127.0.0.1:\(server.port)",
                               "--cacert", caPath, "--connections", "2", "--new-connection-per-request"])
        XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
        XCTAssertEqual(figures.responses, server.counted.responses)
        XCTAssertEqual(server.counted.connects, figures.responses)
    }

    func testAServerCertificateFromAnotherCAEndsTheRun() throws {
        let server = try TestServer(mode: .tls, authority: try TestAuthority(), group: group)
        defer { try? server.close() }
        XCTAssertThrowsError(try run(["--url", "https://127.0.0.1:\(server.port)/", "--cacert", caPath, "--connections", "2"])) {
            let giveUp = $0 as? LoopLoad.GiveUp
            XCTAssertEqual(giveUp?.figures.responses, 0)
            let first = giveUp?.figures.firstErrors.first ?? "none"
            XCTAssertTrue(first.hasPrefix("TLS handshake failed") && first.contains("CERTIFICATE_VERIFY_FAILED"), first)
        }
    }

    func testARefusedPortEndsTheRunWithTheConnectError() throws {
        let server = try TestServer(mode: .plain, authority: nil, group: group)
        let port = server.port
        try server.close()
        XCTAssertThrowsError(try run(["--url", "http://127.0.0.1:\(port)/", "--connections", "2"])) {
            let first = ($0 as? LoopLoad.GiveUp)?.figures.firstErrors.first ?? "none"
            XCTAssertTrue(first.hasPrefix("connect failed"), first)
        }
    }

    func testASilentServerTimesOutInsteadOfHanging() throws {
        let server = try TestServer(mode: .silent, authority: nil, group: group)
        defer { try? server.close() }
        let figures = try run(["--url", "http://127.0.0.1:\(server.port)/", "--connections", "2", "--timeout", "0.2"])
        XCTAssertEqual(figures.completed, 0)
        XCTAssertGreaterThan(figures.errors, 0)
        XCTAssertEqual(figures.firstErrors, ["no progress for 0.2 s waiting for the response"])
    }

    private func run(_ arguments: [String]) throws -> LoadFigures {
        let command = try LoadCommand.parse(arguments + ["--duration", "0.3"])
        return try LoadRun(plan: try command.makePlan(), connections: command.connections, threads: 1,
                           warmup: .nanoseconds(Int64(command.warmup * 1e9)), duration: .milliseconds(300)).execute()
    }
}
