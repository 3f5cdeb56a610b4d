import Foundation
import ChildProcess
import ProxyModel
import TestSupport
import XCTest

/// HTTP/2 between the proxy and an origin that picks `h2` in ALPN (`TestOrigin` with
/// `originSpeaksHTTP2`), with curl as the client over HTTP/1.1 and HTTP/2: every pairing works,
/// one connection carries many exchanges (up to the origin's `SETTINGS_MAX_CONCURRENT_STREAMS`),
/// trailers go through, a stream the origin resets fails only its own exchange, GOAWAY sends the
/// next request to a new connection, and upgrades and `--no-http2` stay on HTTP/1.1.
final class HTTP2OriginTests: XCTestCase {
    private func trustProxy(_ fixture: InterceptingFixture, http2: Bool) -> [String] {
        [http2 ? "--http2" : "--http1.1", "--cacert", fixture.tls.proxyCAFile.path]
    }

    /// An HTTP/1.1 client's requests reach the origin over HTTP/2, `Host` as `:authority`, and
    /// the second one reuses the first one's connection.
    func testHTTP1ClientToHTTP2Origin() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            for _ in 0..<2 {
                let result = try await Curl.viaProxy(
                    fixture.proxy.port,
                    trustProxy(fixture, http2: false) + ["-o", "/dev/null", "-w", "%{http_version} %{http_code} %{size_download}",
                                                         fixture.tlsURL("/bytes/70000")])
                XCTAssertEqual(result.exitCode, 0, result.summary)
                XCTAssertEqual(result.stdoutText, "1.1 200 70000")
            }
            let requests = fixture.tlsOrigin.log.requests
            XCTAssertEqual(requests.map(\.version), ["HTTP/2.0", "HTTP/2.0"])
            XCTAssertEqual(requests.first?.headers.first(named: "host"), "localhost:\(fixture.tlsOrigin.port)")
            XCTAssertEqual(Set(requests.map(\.connection)).count, 1, "both requests on one HTTP/2 connection")
            XCTAssertEqual(fixture.tlsOrigin.log.acceptedConnections, 1)
            let flows = try await fixture.proxy.waitForFlows(count: 2)
            XCTAssertTrue(flows.allSatisfy { $0.status == 200 && $0.error == nil && $0.httpVersion == "HTTP/1.1" })
        }
    }

    /// By default the origin sees the protocol the client chose: an HTTP/1.1 client's requests
    /// reach an origin that speaks HTTP/2 over HTTP/1.1 (one pooled connection), an HTTP/2
    /// client's over HTTP/2.
    func testTheOriginSeesTheClientsProtocolByDefault() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, originHTTP2Always: false, threads: 1) { fixture in
            for http2 in [false, false, true] {
                let result = try await Curl.viaProxy(
                    fixture.proxy.port,
                    trustProxy(fixture, http2: http2) + ["-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                                                         fixture.tlsURL("/bytes/3000")])
                XCTAssertEqual(result.stdoutText, http2 ? "2 200" : "1.1 200", result.summary)
            }
            let requests = fixture.tlsOrigin.log.requests
            XCTAssertEqual(requests.map(\.version), ["HTTP/1.1", "HTTP/1.1", "HTTP/2.0"])
            XCTAssertEqual(requests[0].connection, requests[1].connection, "the HTTP/1.1 connection is pooled")
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            XCTAssertEqual(flows.map(\.httpVersion), ["HTTP/1.1", "HTTP/1.1", "HTTP/2.0"])
        }
    }

    /// h2 on both sides: twenty parallel streams of different sizes, each complete; the origin's
    /// limit of 8 concurrent streams per connection is reached and kept, so they need a few
    /// connections, not twenty.
    func testHTTP2BothSidesManyStreams() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            // One request first: the proxy learns that the origin speaks HTTP/2.
            let warm = try await Curl.viaProxy(fixture.proxy.port, trustProxy(fixture, http2: true)
                + ["-o", "/dev/null", "-w", "%{http_version} %{http_code}", fixture.tlsURL("/bytes/10")])
            XCTAssertEqual(warm.stdoutText, "2 200", warm.summary)
            var arguments = trustProxy(fixture, http2: true)
                + ["-Z", "--parallel-max", "20", "-w", "%{http_version} %{http_code} %{size_download}\n"]
            for index in 0..<20 {
                arguments += ["-o", "/dev/null", fixture.tlsURL("/bytes/\(1_000_000 + index * 7919)")]
            }
            let result = try await Curl.viaProxy(fixture.proxy.port, arguments, timeout: 30)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let lines = result.stdoutText.split(separator: "\n").map(String.init).sorted()
            XCTAssertEqual(lines, (0..<20).map { "2 200 \(1_000_000 + $0 * 7919)" }.sorted())
            let requests = fixture.tlsOrigin.log.requests
            XCTAssertEqual(requests.count, 21)
            XCTAssertTrue(requests.allSatisfy { $0.version == "HTTP/2.0" })
            let connections = fixture.tlsOrigin.log.acceptedConnections
            // 20 streams, at most 8 at a time on one connection: three connections at least when
            // they all overlap, one more if a slot was taken when a waiter looked.
            XCTAssertLessThanOrEqual(connections, 4, "connections were not shared: \(connections)")
            XCTAssertEqual(fixture.tlsOrigin.log.maxConcurrentStreams, TestOrigin.maxConcurrentStreams,
                           "the origin's stream limit was passed, or never reached")
            let perConnection = Dictionary(grouping: requests, by: \.connection).values.map(\.count)
            XCTAssertGreaterThan(perConnection.max() ?? 0, 1, "no connection carried more than one request")
        }
    }

    /// A 5 MiB upload and a 5 MiB download between an h2 client and an h2 origin arrive whole
    /// (flow control on both connections).
    func testLargeBodiesBothWays() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            let scratch = try TemporaryDirectory("proxyapp-h2-origin")
            defer { scratch.remove() }
            let count = 5 << 20
            let upload = scratch.url.appendingPathComponent("upload")
            try PatternBytes.writeFile(upload, count: count)
            let echoed = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture, http2: true) + ["--data-binary", "@\(upload.path)", "-o", "/dev/null", "-D", "-",
                                                    fixture.tlsURL("/echo")], timeout: 60)
            XCTAssertEqual(echoed.exitCode, 0, echoed.summary)
            XCTAssertTrue(echoed.stdoutText.lowercased().contains("x-echo-body-checksum: \(Checksum.ofPattern(count: count).hex)"),
                          echoed.stdoutText)
            let downloaded = scratch.url.appendingPathComponent("downloaded")
            let download = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture, http2: false) + ["-o", downloaded.path, fixture.tlsURL("/bytes/\(count)")], timeout: 60)
            XCTAssertEqual(download.exitCode, 0, download.summary)
            XCTAssertNil(try PatternBytes.firstMismatch(inFile: downloaded, expectedCount: count))
            XCTAssertEqual(fixture.tlsOrigin.log.requests.map(\.version), ["HTTP/2.0", "HTTP/2.0"])
        }
    }

    /// The origin's trailers reach an h2 client and an HTTP/1.1 client and are captured on both
    /// flows (the h2 one with its stream id); a client's `TE: trailers` reaches the origin (gRPC
    /// servers look for it).
    func testTrailersAndTE() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            for http2 in [true, false] {
                let result = try await Curl.viaProxy(
                    fixture.proxy.port,
                    trustProxy(fixture, http2: http2) + ["--trace-ascii", "-", "-o", "/dev/null", fixture.tlsURL("/trailers")])
                XCTAssertEqual(result.exitCode, 0, result.summary)
                XCTAssertTrue(result.stdoutText.contains("grpc-status: 0"), "h2 \(http2): \(result.stdoutText)")
                XCTAssertTrue(result.stdoutText.contains("grpc-message: all good"), "h2 \(http2)")
            }
            let flows = try await fixture.proxy.waitForFlows(count: 2)
            for flow in flows {
                XCTAssertEqual(flow.responseTrailers, [HeaderField(name: "grpc-status", value: "0"),
                                                       HeaderField(name: "grpc-message", value: "all good")], flow.httpVersion)
            }
            XCTAssertEqual(flows.map { $0.streamID != nil }.sorted { !$0 && $1 }, [false, true], "a stream id for the h2 flow only")
            let headers = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.tlsURL("/headers"),
                                               trustProxy(fixture, http2: true) + ["-H", "TE: trailers"])
            XCTAssertEqual(headers.status, 200, headers.result.summary)
            XCTAssertTrue(headers.bodyText.contains("te: trailers\n"), headers.bodyText)
        }
    }

    /// The origin resets one stream: that exchange is answered 502 naming the reset and its flow
    /// records it; a stream running beside it on the same connection completes.
    func testResetStreamFailsOnlyItsExchange() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture, http2: true) + ["-Z", "-w", "%{http_code} %{url_effective}\n",
                                                    "-o", "/dev/null", fixture.tlsURL("/bytes/300000"),
                                                    "-o", "/dev/null", fixture.tlsURL("/reset")])
            let lines = Set(result.stdoutText.split(separator: "\n").map(String.init))
            XCTAssertEqual(lines, ["200 \(fixture.tlsURL("/bytes/300000"))", "502 \(fixture.tlsURL("/reset"))"],
                           result.summary)
            let flows = try await fixture.proxy.waitForFlows(count: 2)
            let reset = flows.first { $0.path == "/reset" }
            XCTAssertTrue((reset?.error ?? "").contains("reset the HTTP/2 stream"), reset?.error ?? "no error")
            XCTAssertNil(flows.first { $0.path == "/bytes/300000" }?.error ?? nil)
        }
    }

    /// GOAWAY from the origin: the stream it names as the last one is answered, and the next
    /// request goes on a new connection.
    func testGoAwayMovesLaterRequestsToANewConnection() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            for path in ["/goaway", "/bytes/10", "/bytes/20"] {
                let result = try await Curl.viaProxy(
                    fixture.proxy.port,
                    trustProxy(fixture, http2: false) + ["-o", "/dev/null", "-w", "%{http_code}", fixture.tlsURL(path)])
                XCTAssertEqual(result.stdoutText, "200", "\(path): \(result.summary)")
            }
            let connections = fixture.tlsOrigin.log.requests.map(\.connection)
            XCTAssertEqual(connections.count, 3)
            XCTAssertNotEqual(connections[0], connections[1], "a request went on a connection after its GOAWAY")
            XCTAssertEqual(connections[1], connections[2])
        }
    }

    /// A client waiting for `100 Continue` is answered by the proxy when the request goes on an
    /// HTTP/2 stream (origins rarely send one over HTTP/2: `/echo` never does), and the body
    /// then arrives whole; curl would otherwise wait its 5 s expect timeout.
    func testExpectContinueAnsweredForAnHTTP2Origin() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            let started = Date()
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture, http2: false) + ["-v", "--expect100-timeout", "5", "-H", "Expect: 100-continue",
                                                     "--data-binary", String(repeating: "x", count: 2048), "-o", "/dev/null",
                                                     "-w", "%{http_code}", fixture.tlsURL("/echo")])
            XCTAssertEqual(result.stdoutText, "200", result.summary)
            XCTAssertTrue(result.stderr.contains("< HTTP/1.1 100"), result.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 4, "curl waited for its expect timeout")
            XCTAssertEqual(fixture.tlsOrigin.log.requests.first?.bodyLength, 2048)
        }
    }

    /// An upgrade stays on HTTP/1.1 even to an origin that speaks HTTP/2 (it offers only
    /// `http/1.1` for it), and `--no-http2` keeps every request on HTTP/1.1.
    func testUpgradesAndNoHTTP2StayOnHTTP1() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            let result = try await Curl.viaProxy(
                fixture.proxy.port,
                trustProxy(fixture, http2: false) + ["-o", "/dev/null", "-w", "%{http_code}", "--max-time", "3",
                                                     "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                                                     fixture.tlsURL("/upgrade")])
            XCTAssertEqual(result.stdoutText, "101", result.summary)
            XCTAssertEqual(fixture.tlsOrigin.log.requests.last?.version, "HTTP/1.1")
        }
        try await InterceptingFixture.run(offersHTTP2: false, originSpeaksHTTP2: true) { fixture in
            let result = try await Curl.viaProxy(
                fixture.proxy.port, trustProxy(fixture, http2: false) + ["-o", "/dev/null", "-w", "%{http_code}",
                                                                         fixture.tlsURL("/bytes/10")])
            XCTAssertEqual(result.stdoutText, "200", result.summary)
            XCTAssertEqual(fixture.tlsOrigin.log.requests.map(\.version), ["HTTP/1.1"])
        }
    }

    /// The wider flow-control windows toward an h2 origin (`UpstreamHTTP2Connection.streamWindow`)
    /// still let a client that stops reading hold the origin back: curl writes a 1 GiB body into a
    /// pipe nobody reads, and the origin stops after the windows and socket buffers, not the GiB.
    func testAClientThatStopsReadingHoldsAnHTTP2OriginBack() async throws {
        try await InterceptingFixture.run(originSpeaksHTTP2: true, threads: 1) { fixture in
            let curl = (["-s", "-x", "http://127.0.0.1:\(fixture.proxy.port)"] + trustProxy(fixture, http2: false)
                        + [fixture.tlsURL("/bytes/\(1 << 30)")]).joined(separator: " ")
            // `sleep` never reads the pipe: once it is full, curl stops reading from the proxy.
            let stalled = Task { try await ChildProcess.run("/bin/sh", ["-c", "\(Curl.executable) \(curl) | sleep 8"], timeout: 30) }
            let held = try await BackPressureTests.settledStreamedBytes(fixture.tlsOrigin)
            XCTAssertGreaterThan(held, 0, "the transfer never started")
            XCTAssertLessThan(held, 128 << 20, "the proxy kept taking the origin's DATA while the client did not read")
            XCTAssertEqual(fixture.tlsOrigin.log.requests.map(\.version), ["HTTP/2.0"])
            _ = try await stalled.value
        }
    }
}

