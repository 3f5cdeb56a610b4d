import Foundation
import NIOPosix
import NIOSSL
import XCTest

/// The HTTP/2 attacks with CVEs, sent to a decrypted h2 connection byte by byte (`H2Frames`):
/// each is cut off (a GOAWAY, or the connection closed) without the proxy doing the work the
/// attacker asks for, and a well-behaved client is served right after.
final class HTTP2AttackTests: XCTestCase {
    private struct Attack {
        var fixture: InterceptingFixture
        var client: WireClient

        var authority: String { "localhost:\(fixture.tlsOrigin.port)" }

        /// Frames received until a GOAWAY arrived or the connection closed (nil when neither
        /// happened within `timeout`).
        func cutOff(timeout: TimeInterval = 15) async throws -> (frames: [H2Frames.Frame], goAway: UInt32?)? {
            let data = try await client.receive(timeout: timeout) { data in
                H2Frames.parse(data).contains { $0.kind == H2Frames.Kind.goAway.rawValue }
            }
            let frames = H2Frames.parse(data)
            let goAway = frames.first { $0.kind == H2Frames.Kind.goAway.rawValue }?.goAwayCode
            return goAway != nil || client.isClosed ? (frames, goAway) : nil
        }
    }

    /// Opens an h2 connection through the proxy's interception (preface and SETTINGS sent).
    private func attack(maxConnections: Int? = nil, _ body: (Attack) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await run(body, group: group, maxConnections: maxConnections)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    private func run(_ body: (Attack) async throws -> Void, group: MultiThreadedEventLoopGroup,
                     maxConnections: Int?) async throws {
        try await InterceptingFixture.run(maxConnections: maxConnections) { fixture in
            var trust = TLSConfiguration.makeClientConfiguration()
            trust.trustRoots = .file(fixture.tls.proxyCAFile.path)
            trust.applicationProtocols = ["h2"]
            // The attacked connection is often cut without a close_notify: do not wait 5 s for one.
            trust.shutdownTimeout = .milliseconds(100)
            let client = try await WireClient.connect(
                proxyPort: fixture.proxy.port, group: group,
                tunnel: (host: "localhost", port: fixture.tlsOrigin.port, trust: try NIOSSLContext(configuration: trust)))
            defer { client.close() }
            try await client.send(H2Frames.opening)
            try await body(Attack(fixture: fixture, client: client))
            try await assertStillServes(fixture)

        }
    }

    private func assertStillServes(_ fixture: InterceptingFixture, file: StaticString = #filePath, line: UInt = #line) async throws {
        let result = try await Curl.viaProxy(
            fixture.proxy.port, ["--http2", "--cacert", fixture.tls.proxyCAFile.path, "-o", "/dev/null",
                                 "-w", "%{http_version} %{http_code}", fixture.tlsURL("/bytes/10")])
        XCTAssertEqual(result.stdoutText, "2 200", "another client after the attack: \(result.summary)", file: file, line: line)
    }

    /// Rapid reset (CVE-2023-44487): streams opened and reset at once, thousands of times. The
    /// connection is cut long before the origin sees thousands of requests.
    func testRapidResetIsCutOff() async throws {
        try await attack { attack in
            let block = H2Frames.requestBlock(path: "/bytes/10", authority: attack.authority)
            var sent = 0
            for batch in 0..<40 {
                var bytes: [UInt8] = []
                for index in 0..<100 {
                    let stream = UInt32((batch * 100 + index) * 2 + 1)
                    bytes += H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: stream, block)
                    bytes += H2Frames.rstStream(stream)
                }
                guard !attack.client.isClosed else { break }
                try? await attack.client.send(bytes)
                sent += 100
            }
            let outcome = try await attack.cutOff()
            XCTAssertNotNil(outcome, "4,000 opened-and-reset streams and the connection is still open")
            XCTAssertEqual(outcome?.goAway, 11, "ENHANCE_YOUR_CALM")
            XCTAssertLessThan(attack.fixture.tlsOrigin.log.requests.count, 1000,
                              "the origin got most of \(sent) reset requests")
        }
    }

    /// CONTINUATION flood (CVE-2024-27316 family): a header block that never ends.
    func testContinuationFloodIsCutOff() async throws {
        try await attack { attack in
            let start = H2Frames.requestBlock(path: "/bytes/10", authority: attack.authority)
            try await attack.client.send(H2Frames.frame(.headers, stream: 1, start))
            let filler = H2Frames.literal("x-filler", String(repeating: "a", count: 200))
            for _ in 0..<50 where !attack.client.isClosed {
                var bytes: [UInt8] = []
                for _ in 0..<100 { bytes += H2Frames.frame(.continuation, stream: 1, filler) }
                try? await attack.client.send(bytes)
            }
            let outcome = try await attack.cutOff()
            XCTAssertNotNil(outcome, "5,000 CONTINUATION frames and the connection is still open")
            XCTAssertEqual(outcome?.goAway, 11, "ENHANCE_YOUR_CALM")
            XCTAssertTrue(attack.fixture.tlsOrigin.log.requests.isEmpty, "a header block that never ended was forwarded")
        }
    }

    /// HPACK bomb: one 4 KiB field put in the dynamic table, then referenced 4,000 times (a
    /// few KiB on the wire, 16 MiB decoded): refused for its size, never forwarded.
    func testHPACKBombIsRefused() async throws {
        try await attack { attack in
            var block = H2Frames.requestBlock(path: "/headers", authority: attack.authority)
            block += H2Frames.literal("x-bomb", String(repeating: "b", count: 4096), indexing: true)
            for _ in 0..<4000 { block += H2Frames.indexed(62) }
            var bytes: [UInt8] = []
            var offset = 0
            // Frames of at most 16 KiB (the default SETTINGS_MAX_FRAME_SIZE).
            while offset < block.count {
                let end = min(offset + 16_000, block.count)
                let last = end == block.count
                bytes += H2Frames.frame(offset == 0 ? .headers : .continuation,
                                        flags: (last ? H2Frames.endHeaders : 0) | (offset == 0 ? H2Frames.endStream : 0),
                                        stream: 1, Array(block[offset..<end]))
                offset = end
            }
            try await attack.client.send(bytes)
            let outcome = try await attack.cutOff()
            XCTAssertEqual(outcome?.goAway, 9, "COMPRESSION_ERROR: the header list is over the size the proxy announced")
            XCTAssertTrue(attack.fixture.tlsOrigin.log.requests.isEmpty, "the bomb's request was forwarded")
        }
    }

    /// SETTINGS and PING floods: every frame asks for an acknowledgement; the connection is cut
    /// rather than queueing acknowledgements without bound.
    func testSettingsAndPingFloodsAreCutOff() async throws {
        try await attack { attack in
            for round in 0..<40 where !attack.client.isClosed {
                var bytes: [UInt8] = []
                for index in 0..<500 {
                    bytes += index % 2 == 0 ? H2Frames.frame(.settings) : H2Frames.ping(UInt64(round * 500 + index))
                }
                try? await attack.client.send(bytes)
            }
            let outcome = try await attack.cutOff()
            XCTAssertNotNil(outcome, "20,000 SETTINGS and PING frames and the connection is still open")
            XCTAssertEqual(outcome?.goAway, 11, "ENHANCE_YOUR_CALM")
        }
    }

    /// A client resetting one stream ends that exchange only, recorded with the reason; the
    /// connection's other streams, and new ones, go on.
    func testAResetStreamEndsOnlyItsExchange() async throws {
        try await attack { attack in
            let client = attack.client
            func get(_ path: String, stream: UInt32) async throws {
                try await client.send(H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: stream,
                                                     H2Frames.requestBlock(path: path, authority: attack.authority)))
            }
            func ended(_ stream: UInt32) async throws -> Bool {
                let data = try await client.receive(timeout: 10) { data in
                    H2Frames.parse(data).contains { $0.stream == stream && $0.flags & H2Frames.endStream != 0 }
                }
                return H2Frames.parse(data).contains { $0.stream == stream && $0.flags & H2Frames.endStream != 0 }
            }
            try await get("/slow-headers", stream: 1)
            try await get("/bytes/10", stream: 3)
            let third = try await ended(3)
            XCTAssertTrue(third, "stream 3 answered while stream 1 waits")
            try await client.send(H2Frames.rstStream(1))
            try await get("/bytes/20", stream: 5)
            let fifth = try await ended(5)
            XCTAssertTrue(fifth, "a new stream after the reset")
            XCTAssertFalse(client.isClosed)
            let flows = try await attack.fixture.proxy.waitForFlows(count: 3)
            let reset = flows.first { $0.path == "/slow-headers" }
            XCTAssertEqual(reset?.error, "the client reset the stream (CANCEL)")
            XCTAssertEqual(flows.filter { $0.status == 200 }.map(\.path).sorted(), ["/bytes/10", "/bytes/20"])
        }
    }

    /// A client that stops reading one stream (no WINDOW_UPDATE for it, while it keeps the
    /// connection's window open): that stream's origin is held back after its buffers, not read
    /// into the proxy's memory, and another stream of the connection still completes.
    func testAStalledStreamHoldsBackOnlyItsOrigin() async throws {
        try await attack { attack in
            let client = attack.client
            let size = 1 << 30
            try await client.send(H2Frames.windowUpdate(0, increment: 1 << 30)
                + H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: 1,
                                 H2Frames.requestBlock(path: "/bytes/\(size)", authority: attack.authority)))
            let held = try await BackPressureTests.settledStreamedBytes(attack.fixture.tlsOrigin)
            XCTAssertGreaterThan(held, 0, "the download never started")
            XCTAssertLessThan(held, 128 << 20, "the proxy kept reading the origin for a stream nobody reads")
            let received = H2Frames.parse(try await client.receive(timeout: 1) { _ in false })
                .filter { $0.stream == 1 && $0.kind == H2Frames.Kind.data.rawValue }.reduce(0) { $0 + $1.payload.count }
            XCTAssertLessThanOrEqual(received, 65_535, "more than the stream's window reached the client")

            try await client.send(H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: 3,
                                                 H2Frames.requestBlock(path: "/bytes/1000", authority: attack.authority)))
            let data = try await client.receive(timeout: 10) { data in
                H2Frames.parse(data).contains { $0.stream == 3 && $0.flags & H2Frames.endStream != 0 }
            }
            let third = H2Frames.parse(data).filter { $0.stream == 3 && $0.kind == H2Frames.Kind.data.rawValue }
            XCTAssertEqual(third.reduce(0) { $0 + $1.payload.count }, 1000, "stream 3 completes beside the stalled one")
        }
    }

    /// Each stream may hold an upstream connection, so it takes a `--max-connections` slot: past
    /// the limit a stream gets the 503 an HTTP/1 connection would, and the connection's other
    /// streams go on. (Limit 3: this connection and streams 1 and 3; once those two are reset,
    /// the curl that checks the proxy still serves fits beside it.)
    func testStreamsPastTheConnectionLimitGet503() async throws {
        try await attack(maxConnections: 3) { attack in
            let client = attack.client
            for stream: UInt32 in [1, 3, 5] {
                try await client.send(H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: stream,
                                                     H2Frames.requestBlock(path: "/slow-headers", authority: attack.authority)))
            }
            let data = try await client.receive(timeout: 10) { data in
                H2Frames.parse(data).contains { $0.stream == 5 && $0.flags & H2Frames.endStream != 0 }
            }
            let fifth = H2Frames.parse(data).filter { $0.stream == 5 && $0.kind == H2Frames.Kind.data.rawValue }
            let text = String(decoding: fifth.flatMap(\.payload), as: UTF8.self)
            XCTAssertEqual(text, "ProxyApp is serving its limit of 3 connections (--max-connections); try again shortly.\n")
            XCTAssertFalse(H2Frames.parse(data).contains { ($0.stream == 1 || $0.stream == 3) && $0.flags & H2Frames.endStream != 0 },
                           "streams 1 and 3 still wait for their origin")
            let deadline = Date().addingTimeInterval(10)
            while attack.fixture.tlsOrigin.log.requests.count < 2 && Date() < deadline {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            XCTAssertEqual(attack.fixture.tlsOrigin.log.requests.map(\.uri), ["/slow-headers", "/slow-headers"],
                           "streams 1 and 3 reached the origin, the refused stream 5 did not")
            // Their slots come back once the reset streams have closed (after their flows are
            // recorded): the check that the proxy still serves waits for that.
            try await client.send(H2Frames.rstStream(1) + H2Frames.rstStream(3))
            _ = try await attack.fixture.proxy.waitForFlows(count: 2)
            var served = ""
            while served != "2 200" && Date() < deadline {
                served = try await Curl.viaProxy(
                    attack.fixture.proxy.port, ["--http2", "--cacert", attack.fixture.tls.proxyCAFile.path, "-o", "/dev/null",
                                                "-w", "%{http_version} %{http_code}", attack.fixture.tlsURL("/bytes/10")]).stdoutText
            }
            XCTAssertEqual(served, "2 200", "the slots of the reset streams came back")
        }
    }

    /// Smuggling-shaped requests over HTTP/2: connection-specific fields (`Connection` naming a
    /// framing field, `Transfer-Encoding`) are malformed in HTTP/2 and the stream is reset before
    /// anything is forwarded; a body shorter than its `Content-Length` is reset too. A normal
    /// stream of the same connection is served afterwards.
    func testSmugglingShapedStreamsAreReset() async throws {
        try await attack { attack in
            let client = attack.client
            func headers(_ stream: UInt32, _ extra: [UInt8], endStream: Bool = true) -> [UInt8] {
                H2Frames.frame(.headers, flags: H2Frames.endHeaders | (endStream ? H2Frames.endStream : 0), stream: stream,
                               H2Frames.requestBlock(path: "/echo", authority: attack.authority) + extra)
            }
            try await client.send(headers(1, H2Frames.literal("connection", "content-length")))
            try await client.send(headers(3, H2Frames.literal("transfer-encoding", "chunked")))
            try await client.send(headers(5, H2Frames.literal("content-length", "10"), endStream: false)
                + H2Frames.frame(.data, flags: H2Frames.endStream, stream: 5, Array("hello".utf8)))
            let data = try await client.receive(timeout: 10) { data in
                let resets = Set(H2Frames.parse(data).filter { $0.kind == H2Frames.Kind.rstStream.rawValue }.map(\.stream))
                return resets.isSuperset(of: [1, 3, 5])
            }
            let resets = Set(H2Frames.parse(data).filter { $0.kind == H2Frames.Kind.rstStream.rawValue }.map(\.stream))
            XCTAssertEqual(resets.intersection([1, 3, 5]), [1, 3, 5], "each malformed stream is reset")
            XCTAssertFalse(H2Frames.parse(data).contains { [1, 3].contains($0.stream) && $0.kind == H2Frames.Kind.headers.rawValue },
                           "no response to a malformed request")
            XCTAssertFalse(attack.fixture.tlsOrigin.log.requests.contains { $0.bodyLength == 5 },
                           "a body shorter than its Content-Length reached the origin as a whole request")
            XCTAssertFalse(attack.fixture.tlsOrigin.log.requests.contains { $0.headers.first(named: "transfer-encoding") != nil
                && $0.headers.first(named: "content-length") != nil }, "both framing fields forwarded")
            try await client.send(H2Frames.frame(.headers, flags: H2Frames.endStream | H2Frames.endHeaders, stream: 7,
                                                 H2Frames.requestBlock(path: "/bytes/10", authority: attack.authority)))
            let after = try await client.receive(timeout: 10) { data in
                H2Frames.parse(data).contains { $0.stream == 7 && $0.flags & H2Frames.endStream != 0 }
            }
            XCTAssertTrue(H2Frames.parse(after).contains { $0.stream == 7 && $0.flags & H2Frames.endStream != 0 },
                          "the connection still serves a well-formed stream")
        }
    }
}
