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
        try runUntilMeasured(.plain, authority: nil, { port in
            ["--url", "http://127.0.0.1:\(port)/x", "--connections", "4"]
        }) { figures, server in
            XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
            XCTAssertEqual(figures.responses, server.responses)
            XCTAssertEqual(figures.connections, 4)
            XCTAssertEqual(server.connections, 4)
        }
    }

    func testDirectTLSWithANewConnectionPerRequest() throws {
        try runUntilMeasured(.tls, authority: authority, { port in
            ["--url", "https://127.0.0.1:\(port)/x", "--cacert", self.caPath, "--connections", "3",
             "--new-connection-per-request"]
        }) { figures, server in
            XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
            XCTAssertEqual(figures.responses, server.responses)
            XCTAssertEqual(figures.connections, figures.responses)
            XCTAssertEqual(server.connections, figures.connections)
        }
    }

    /// CONNECT, then TLS with SNI `localhost` inside the tunnel, then keep-alive requests; the
    /// warm-up's responses count in `responses` only.
    func testTunnelledTLSKeepAlive() throws {
        try runUntilMeasured(.tunnelling, authority: authority, warmup: true, { port in
            ["--url", "https://localhost:\(port + 1)/x", "--proxy", "127.0.0.1:\(port)", "--cacert", self.caPath,
             "--connections", "3"]
        }, alsoUntil: { $0.responses > $0.completed }) { figures, server in
            XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
            XCTAssertGreaterThanOrEqual(figures.responses, figures.completed)
            XCTAssertEqual(figures.responses, server.responses)
            XCTAssertEqual(server.connects, 3)
        }
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

    /// `--h2` straight to an HTTP/2 server: one connection per worker, many streams on each,
    /// and every response the server wrote counted once (the streams in flight at the end too).
    func testDirectHTTP2KeepsStreamsInFlightOnEachConnection() throws {
        try runUntilMeasured(.h2, authority: authority, { port in
            ["--url", "https://localhost:\(port)/x", "--cacert", self.caPath, "--connections", "2", "--h2", "--streams", "8"]
        }, alsoUntil: { $0.responses > 16 }) { figures, server in
            XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
            XCTAssertEqual(figures.non2xx, 0)
            XCTAssertEqual(figures.responses, server.responses)
            XCTAssertEqual(figures.connections, 2)
            XCTAssertEqual(server.connections, 2)
        }
    }

    /// `--h2` through a proxy: CONNECT, then TLS with ALPN h2 and HTTP/2 inside the tunnel.
    func testTunnelledHTTP2() throws {
        try runUntilMeasured(.h2Tunnelling, authority: authority, warmup: true, { port in
            ["--url", "https://localhost:\(port + 1)/x", "--proxy", "127.0.0.1:\(port)", "--cacert", self.caPath,
             "--connections", "2", "--h2", "--streams", "4"]
        }, alsoUntil: { $0.responses > $0.completed }) { figures, server in
            XCTAssertEqual(figures.errors, 0, "\(figures.firstErrors)")
            XCTAssertEqual(figures.responses, server.responses)
            XCTAssertEqual(server.connects, 2)
        }
    }

    /// A server that does not offer h2 completes the handshake without ALPN (NIOSSL answers no
    /// common protocol so): the run ends naming what was chosen, rather than sending HTTP/2 to it.
    func testHTTP2AgainstAnHTTP1ServerEndsTheRunWithTheALPNOutcome() throws {
        let server = try TestServer(mode: .tls, authority: authority, group: group)
        defer { try? server.close() }
        XCTAssertThrowsError(try run(["--url", "https://127.0.0.1:\(server.port)/", "--cacert", caPath,
                                      "--connections", "2", "--h2"])) {
            let first = ($0 as? LoopLoad.GiveUp)?.figures.firstErrors.first ?? "none"
            XCTAssertTrue(first.hasPrefix("the server did not choose HTTP/2 in ALPN (it chose nothing)"), first)
        }
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

    private func run(_ arguments: [String], warmup: Double = 0, seconds: Double = 0.3) throws -> LoadFigures {
        let command = try LoadCommand.parse(arguments + ["--duration", "\(seconds)", "--warmup", "\(warmup)"])
        return try LoadRun(plan: try command.makePlan(), connections: command.connections, threads: 1,
                           warmup: .nanoseconds(Int64(command.warmup * 1e9)),
                           duration: .nanoseconds(Int64(command.duration * 1e9))).execute()
    }

    /// Runs against a fresh `mode` server until a response landed in the measured window (and
    /// in the warm-up, when there is one) and `alsoUntil` holds. On a loaded machine a short
    /// window may see no response, which proves nothing: the window (warm-up and duration)
    /// doubles from 0.3 s, each run checked by `check` with the server's counts, and the test
    /// fails with the last figures if 4.8 s never were enough.
    private func runUntilMeasured(_ mode: TestServer.Mode, authority: TestAuthority?, warmup: Bool = false,
                                  _ arguments: (Int) -> [String], alsoUntil: (LoadFigures) -> Bool = { _ in true },
                                  check: (LoadFigures, TestServer.Counts) -> Void,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        var last = LoadFigures()
        for seconds in [0.3, 0.6, 1.2, 2.4, 4.8] {
            let server = try TestServer(mode: mode, authority: authority, group: group)
            defer { try? server.close() }
            last = try run(arguments(server.port), warmup: warmup ? seconds : 0, seconds: seconds)
            check(last, server.counted)
            if last.completed > 0 && alsoUntil(last) { return }
        }
        XCTFail("not even a 4.8 s window saw what the test needs: \(last)", file: file, line: line)
    }
}
