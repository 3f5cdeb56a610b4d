import Foundation
import NIOCore
import ProxyEngine
import ProxyModel
import TestSupport
import XCTest

/// A hostile or broken HTTP/2 origin (`HostileH2Origin`: raw frames after TLS with ALPN `h2`)
/// behind the intercepting proxy. Each attack ends in a clear answer for the client within a few
/// seconds — a 502/504 with a one-line reason, or, once the response head went out, a cut
/// connection — never a hang or a crash; the flow records the failure in words (no library
/// type names); a request that is not safe to repeat reaches the origin at most once; and the
/// proxy serves the next request, to the same origin (a new connection or stream) and to a
/// well-behaved one.
final class HTTP2HostileOriginTests: XCTestCase {
    /// The proxy, the hostile origin, and a well-behaved h2 origin behind the same proxy.
    private struct Setup {
        let proxy: ProxyHarness
        let hostile: HostileH2Origin
        let good: TestOrigin
        let tls: TLSFixtures

        /// `https://localhost:PORT/` on the hostile origin: answered well unless the script
        /// says otherwise.
        var safeURL: String { hostile.url("/") }
        /// `https://localhost:PORT/index.html`: what each attack is pointed at.
        var attackURL: String { hostile.url("/index.html") }

        func trust(http2: Bool = false) -> [String] {
            [http2 ? "--http2" : "--http1.1", "--cacert", tls.proxyCAFile.path]
        }
    }

    /// Text only a library's own error description would hold, never a reason in words.
    private static let libraryMarkers = ["NIO", "Error(", "Errors", "ioOnClosedChannel", "eof", "errorCode:", "streamID"]

    private func run(_ script: HostileH2Origin.Script, upstreamTimeout: TimeAmount = .seconds(10),
                     clientIdleTimeout: TimeAmount = .seconds(10), connectTimeout: TimeAmount = .seconds(5),
                     _ body: (Setup) async throws -> Void) async throws {
        let scratch = try TemporaryDirectory("proxyapp-h2-hostile")
        defer { scratch.remove() }
        let tls = try TLSFixtures(directory: scratch.url)
        let hostile = try await HostileH2Origin.start(tls: try tls.originContext(for: "localhost", protocols: ["h2"]),
                                                      script: script)
        let good: TestOrigin
        do {
            good = try await TestOrigin.start(tls: try tls.originContext(for: "localhost", protocols: ["h2", "http/1.1"]))
        } catch {
            await hostile.shutdown()
            throw error
        }
        var proxy: ProxyHarness?
        do {
            let harness = try await ProxyHarness.start(interception: { _ in try tls.interception(pins: nil) },
                                                       threads: 1) { configuration in
                configuration.upstreamTimeout = upstreamTimeout
                configuration.clientIdleTimeout = clientIdleTimeout
                configuration.connectTimeout = connectTimeout
            }
            proxy = harness
            try await body(Setup(proxy: harness, hostile: hostile, good: good, tls: tls))
        } catch {
            await proxy?.shutdown()
            await hostile.shutdown()
            await good.shutdown()
            throw error
        }
        await proxy?.shutdown()
        await hostile.shutdown()
        await good.shutdown()
    }

    /// Fetches `url` through the proxy and measures how long the answer took.
    private func fetch(_ setup: Setup, _ url: String, http2: Bool = false, _ arguments: [String] = [],
                       timeout: TimeInterval = 20) async throws -> (Curl.Fetched, TimeInterval) {
        let started = Date()
        let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, setup.trust(http2: http2) + arguments,
                                           timeout: timeout)
        return (fetched, Date().timeIntervalSince(started))
    }

    /// The proxy answered `status` with a one-line reason holding `reason`, within `seconds`.
    private func assertAnswered(_ fetched: Curl.Fetched, elapsed: TimeInterval, status: Int, reason: String,
                                within seconds: TimeInterval = 8, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fetched.status, status, "\(fetched.bodyText) \(fetched.result.summary)", file: file, line: line)
        let body = fetched.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(body.contains(reason), "reason: \(body)", file: file, line: line)
        XCTAssertFalse(body.contains("\n"), "more than one line: \(body)", file: file, line: line)
        XCTAssertLessThan(elapsed, seconds, "answered after \(elapsed) s", file: file, line: line)
        assertInWords(body, file: file, line: line)
    }

    private func assertInWords(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        for marker in Self.libraryMarkers {
            XCTAssertFalse(text.contains(marker), "library text '\(marker)' in: \(text)", file: file, line: line)
        }
    }

    /// The flows of the attacked path, once `count` of them are stored.
    private func attackFlows(_ setup: Setup, count: Int = 1) async throws -> [Flow] {
        let deadline = Date().addingTimeInterval(10)
        var flows: [Flow] = []
        repeat {
            flows = try setup.proxy.flushedFlows().filter { $0.path == "/index.html" && $0.port == setup.hostile.port }
            if flows.count >= count { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        } while Date() < deadline
        return flows
    }

    /// The flow of the attacked path records an error holding `words`, in words.
    private func assertFlowError(_ setup: Setup, contains words: String, file: StaticString = #filePath,
                                 line: UInt = #line) async throws {
        let flow = try await attackFlows(setup).first
        XCTAssertNotNil(flow, "no flow for the attacked path", file: file, line: line)
        let error = flow?.error ?? ""
        XCTAssertTrue(error.contains(words), "flow error: '\(error)'", file: file, line: line)
        assertInWords(error, file: file, line: line)
    }

    /// The proxy still serves the hostile origin's well-behaved path and the good origin.
    private func assertStillServes(_ setup: Setup, file: StaticString = #filePath, line: UInt = #line) async throws {
        let (same, _) = try await fetch(setup, setup.safeURL, timeout: 10)
        XCTAssertEqual(same.status, 200, "same origin afterwards: \(same.result.summary)", file: file, line: line)
        XCTAssertEqual(same.bodyText, "ok", file: file, line: line)
        let (other, _) = try await fetch(setup, "https://localhost:\(setup.good.port)/bytes/10", http2: true, timeout: 10)
        XCTAssertEqual(other.status, 200, "good origin afterwards: \(other.result.summary)", file: file, line: line)
    }

    /// `count` parallel GETs of `url` over one h2 client connection; the status of each.
    private func parallelGETs(_ setup: Setup, _ url: String, count: Int) async throws -> ([String], TimeInterval) {
        let started = Date()
        var arguments = setup.trust(http2: true) + ["-Z", "--parallel-max", String(count), "-w", "%{http_code}\n"]
        for _ in 0..<count { arguments += ["-o", "/dev/null", url] }
        let result = try await Curl.viaProxy(setup.proxy.port, arguments, timeout: 20)
        return (result.stdoutText.split(separator: "\n").map(String.init), Date().timeIntervalSince(started))
    }

    // MARK: 1. closed with streams open

    /// The origin closes its TCP connection while three GETs are open on it (after one request
    /// was answered, so the connection was a pooled one): each GET, safe to repeat, is sent once
    /// more on a new connection and answered 200; none is sent a third time.
    func testConnectionClosedWithStreamsOpenRetriesEachGETOnce() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html", connection.number == 1 else {
                return connection.respond(request.stream)
            }
            if connection.pending.count >= 3 {
                connection.close()
            } else if connection.pending.count == 1 {
                // Never wait forever for the others: close half a second after the first anyway.
                connection.after(.milliseconds(500)) { connection.close() }
            }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let (statuses, elapsed) = try await parallelGETs(setup, setup.attackURL, count: 3)
            XCTAssertEqual(statuses, ["200", "200", "200"])
            XCTAssertLessThan(elapsed, 10)
            let attacked = setup.hostile.requests(path: "/index.html")
            XCTAssertEqual(attacked.filter { $0.connection == 1 }.count, 3, "all three on the pooled connection first")
            XCTAssertEqual(attacked.filter { $0.connection > 1 }.count, 3, "each sent once more: \(attacked)")
            let flows = try await attackFlows(setup, count: 3)
            XCTAssertEqual(flows.map(\.status), [200, 200, 200])
            XCTAssertTrue(flows.allSatisfy { $0.error == nil }, "\(flows.map(\.error))")
            try await assertStillServes(setup)
        }
    }

    /// The origin closes its connection once a POST's body arrived: the POST is answered 502
    /// (never sent again: it is not safe to repeat), and the origin saw it once.
    func testConnectionClosedWithAPOSTOpenAnswers502AndSendsItOnce() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            if request.path == "/index.html" && request.method == "POST" {
                connection.close()
            } else {
                connection.respond(request.stream)
            }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL, ["--data-binary", "hello"])
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "closed the connection before a complete response")
            let posts = setup.hostile.requests(path: "/index.html")
            XCTAssertEqual(posts.map(\.method), ["POST"], "the POST reached the origin more or less than once")
            XCTAssertEqual(posts.first?.bodyBytes, 5)
            try await assertFlowError(setup, contains: "closed the connection before a complete response")
            try await assertStillServes(setup)
        }
    }

    // MARK: 2. GOAWAY below streams already sent

    /// GOAWAY naming the first of three open streams as the last one processed: that stream is
    /// answered on the old connection, the two above it are sent again on a new connection (the
    /// origin did not process them), nothing hangs, and the next request never uses the old one.
    func testGoAwayBelowOpenStreamsSendsTheRestToANewConnection() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html", connection.number == 1 else {
                return connection.respond(request.stream)
            }
            let pending = connection.pending.filter { $0.path == "/index.html" }
            guard pending.count == 3, let first = pending.map(\.stream).min() else { return }
            connection.goAway(lastStream: first)
            connection.respond(first)
            // The other two are left unanswered; the connection stays open.
            for other in pending where other.stream != first { connection.markAnswered(other.stream) }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let (statuses, elapsed) = try await parallelGETs(setup, setup.attackURL, count: 3)
            XCTAssertEqual(statuses, ["200", "200", "200"])
            XCTAssertLessThan(elapsed, 10)
            let attacked = setup.hostile.requests(path: "/index.html")
            let first = attacked.filter { $0.connection == 1 }
            XCTAssertEqual(first.count, 3)
            XCTAssertEqual(attacked.filter { $0.connection > 1 }.count, 2,
                           "only the streams above GOAWAY's last stream are sent again: \(attacked)")
            try await assertStillServes(setup)
            XCTAssertFalse(setup.hostile.requests.dropFirst(4).contains { $0.connection == 1 },
                           "a request went on the connection after its GOAWAY")
        }
    }

    // MARK: 3. REFUSED_STREAM

    /// RST_STREAM(REFUSED_STREAM) on a GET of a pooled connection: the GET is sent again on a new
    /// connection and answered 200.
    func testRefusedGETIsRetriedOnANewConnection() async throws {
        let script = HostileH2Origin.Script(onHeaders: { connection, request in
            if request.path == "/index.html" && connection.number == 1 {
                connection.rstStream(request.stream, code: 7)
            }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.bodyText, "ok")
            XCTAssertLessThan(elapsed, 8)
            XCTAssertEqual(setup.hostile.requests(path: "/index.html").map(\.connection), [1, 2])
            try await assertStillServes(setup)
        }
    }

    /// RST_STREAM(REFUSED_STREAM) on a POST: answered 502 naming the refusal, and the origin saw
    /// the POST once (it is never sent twice).
    func testRefusedPOSTIsAnswered502AndSentOnce() async throws {
        let script = HostileH2Origin.Script(onHeaders: { connection, request in
            if request.path == "/index.html" {
                connection.rstStream(request.stream, code: 7)
            }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL, ["--data-binary", "hello"])
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "REFUSED_STREAM")
            XCTAssertEqual(setup.hostile.requests(path: "/index.html").map(\.method), ["POST"])
            try await assertFlowError(setup, contains: "reset the HTTP/2 stream (REFUSED_STREAM)")
            try await assertStillServes(setup)
        }
    }

    // MARK: 4. no SETTINGS

    /// An origin that completes TLS with `h2` and never sends its SETTINGS: the request is
    /// answered with a timeout within the configured limits (never the connection's lifetime), and
    /// the next connection (which does send SETTINGS) is used.
    func testOriginThatNeverSendsSettingsIsAnsweredWithinTheTimeout() async throws {
        // Silent on its first connection: no SETTINGS, and so no ACK of the proxy's either (an
        // ACK first would itself be a protocol error, refused at once).
        let script = HostileH2Origin.Script(settings: { $0 == 1 ? nil : [] })
        try await run(script, upstreamTimeout: .seconds(2), connectTimeout: .seconds(2)) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 504, reason: "localhost:\(setup.hostile.port) sent nothing for 2s")
            XCTAssertGreaterThan(elapsed, 1.5, "answered before the timeout: \(fetched.bodyText)")
            XCTAssertTrue(setup.hostile.requests.isEmpty, "a stream was opened before SETTINGS")
            try await assertFlowError(setup, contains: "sent nothing for 2s")
            try await assertStillServes(setup)
        }
    }

    // MARK: 5. header list size

    /// A response header list over 256 KiB (HEADERS and CONTINUATION frames of plain literals):
    /// refused with a 502, never forwarded.
    func testResponseHeaderListOver256KiBIsRefused() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.markAnswered(request.stream)
            var block = HostileH2Origin.headerBlock(status: 200, [])
            for index in 0..<40 {
                block += H2Frames.literal("x-big-\(index)", String(repeating: "h", count: 8000))
            }
            // 320 KiB in frames of 16 KiB: HEADERS, then CONTINUATION, the last with END_HEADERS.
            var frames: [UInt8] = []
            var offset = 0
            while offset < block.count {
                let end = min(offset + 16_384, block.count)
                let last = end == block.count
                frames += HostileH2Origin.frame(type: offset == 0 ? 1 : 9, flags: last ? 0x4 : 0, stream: request.stream,
                                                Array(block[offset..<end]))
                offset = end
            }
            connection.send(frames)
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "the response header section is larger than 256 KiB")
            try await assertFlowError(setup, contains: "the response header section is larger than 256 KiB")
            try await assertStillServes(setup)
        }
    }

    /// HPACK bomb: one 4,000-byte field put in the dynamic table, then referenced 4,000 times (4
    /// KiB on the wire, 16 MB decoded): refused with a 502 at the 256 KiB limit.
    func testResponseHPACKBombIsRefused() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.markAnswered(request.stream)
            var block = HostileH2Origin.headerBlock(status: 200, [])
            block += H2Frames.literal("x-bomb", String(repeating: "b", count: 4000), indexing: true)
            for _ in 0..<4000 { block += H2Frames.indexed(62) }
            connection.send(HostileH2Origin.frame(type: 1, flags: 0x5, stream: request.stream, block))
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "could not be decoded")
            try await assertFlowError(setup, contains: "could not be decoded")
            try await assertStillServes(setup)
        }
    }

    // MARK: 6. PUSH_PROMISE

    /// PUSH_PROMISE although the proxy's SETTINGS_ENABLE_PUSH is 0: a protocol error, answered
    /// 502; the promised response is never forwarded.
    func testPushPromiseDespiteEnablePushZeroIsRefused() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            let promised = [0x82, 0x84, 0x87] + H2Frames.literal(":authority", "localhost:\(connection.origin.port)")
            connection.send(HostileH2Origin.frame(type: 5, flags: 0x4, stream: request.stream,
                                                  HostileH2Origin.uint32(2) + promised))
            connection.send(HostileH2Origin.frame(type: 1, flags: 0x4, stream: 2, HostileH2Origin.headerBlock(
                status: 200, [("content-length", "6")])) + HostileH2Origin.frame(type: 0, flags: 0x1, stream: 2, Array("pushed".utf8)))
            connection.respond(request.stream)
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "pushed a response although the proxy disabled server push")
            XCTAssertFalse(fetched.bodyText.contains("pushed\n"))
            try await assertFlowError(setup, contains: "disabled server push")
            let goAways = setup.hostile.frames.filter { $0.type == 7 }
            XCTAssertEqual(goAways.first?.errorCode, 1, "GOAWAY(PROTOCOL_ERROR) to the origin: \(goAways)")
            try await assertStillServes(setup)
        }
    }

    // MARK: 7. body and content-length

    /// A DATA frame longer than the response's `content-length`: the client never gets a
    /// complete-looking response (502, or the head and a cut connection), and the flow says why.
    func testBodyLongerThanContentLengthIsNotForwardedWhole() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.respond(request.stream, fields: [("content-length", "10")], body: "0123456789-and-more")
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertLessThan(elapsed, 8)
            XCTAssertFalse(fetched.result.exitCode == 0 && fetched.status == 200,
                           "a response longer than its content-length looked complete: \(fetched.bodyText)")
            XCTAssertFalse(fetched.bodyText.contains("and-more"))
            try await assertFlowError(setup, contains: "the response body did not match its content-length")
            try await assertStillServes(setup)
        }
    }

    /// A body shorter than the response's `content-length`, then END_STREAM: the client never
    /// gets a complete-looking response, and the flow says why.
    func testBodyShorterThanContentLengthIsNotForwardedAsComplete() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.respond(request.stream, fields: [("content-length", "100")], body: "short")
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertLessThan(elapsed, 8)
            XCTAssertFalse(fetched.result.exitCode == 0 && fetched.status == 200,
                           "a response shorter than its content-length looked complete: \(fetched.result.summary)")
            try await assertFlowError(setup, contains: "the response body did not match its content-length")
            try await assertStillServes(setup)
        }
    }

    /// A stream error the proxy's codec raises itself (here a body longer than its
    /// content-length) resets that stream only: a download running beside it on the same
    /// connection completes, and no second connection is needed.
    func testStreamErrorLeavesItsSiblingStreamsRunning() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            if request.path == "/index.html" {
                return connection.respond(request.stream, fields: [("content-length", "10")], body: "0123456789-and-more")
            }
            guard connection.requests.count > 1 else { return connection.respond(request.stream) }
            // The sibling: half its body now, the rest once the bad stream has been dealt with.
            connection.markAnswered(request.stream)
            connection.send(HostileH2Origin.frame(type: 1, flags: 0x4, stream: request.stream,
                                                  HostileH2Origin.headerBlock(status: 200, [("content-length", "20")]))
                            + HostileH2Origin.frame(type: 0, stream: request.stream, Array("first-half".utf8)))
            connection.after(.milliseconds(500)) {
                connection.send(HostileH2Origin.frame(type: 0, flags: 0x1, stream: request.stream, Array("secondhalf".utf8)))
            }
        })
        try await run(script) { setup in
            let (warm, _) = try await fetch(setup, setup.safeURL)
            XCTAssertEqual(warm.status, 200, warm.result.summary)
            let result = try await Curl.viaProxy(
                setup.proxy.port, setup.trust(http2: true) + ["-Z", "-w", "%{http_code} %{size_download} %{url_effective}\n",
                                                               "-o", "/dev/null", setup.safeURL, "-o", "/dev/null", setup.attackURL],
                timeout: 15)
            let lines = result.stdoutText.split(separator: "\n").map(String.init)
            XCTAssertTrue(lines.contains("200 20 \(setup.safeURL)"), "the sibling download: \(lines) \(result.summary)")
            XCTAssertFalse(lines.contains("200 19 \(setup.attackURL)"), "\(lines)")
            XCTAssertEqual(setup.hostile.connections, 1, "the connection was dropped for one stream's error")
            try await assertFlowError(setup, contains: "the response body did not match its content-length")
        }
    }

    // MARK: 8. malformed frames

    /// A frame of an unknown type on stream 0 is ignored (RFC 9113 §4.1): the response after it
    /// is forwarded.
    func testUnknownFrameTypeOnStreamZeroIsIgnored() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            connection.send(HostileH2Origin.frame(type: 0xFA, flags: 0xFF, stream: 0, Array(repeating: 0xAB, count: 100)))
            connection.respond(request.stream)
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(fetched.bodyText, "ok")
            XCTAssertLessThan(elapsed, 8)
            XCTAssertEqual(setup.hostile.connections, 1)
        }
    }

    /// A padded DATA frame whose pad length is past its end: a protocol error, answered 502.
    func testBadPaddingIsAnswered502() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.markAnswered(request.stream)
            connection.send(HostileH2Origin.frame(type: 1, flags: 0x4, stream: request.stream,
                                                  HostileH2Origin.headerBlock(status: 200, [])))
            // PADDED: a pad length of 200 in a 4-byte payload.
            connection.send(HostileH2Origin.frame(type: 0, flags: 0x9, stream: request.stream, [200, 0x61, 0x62, 0x63]))
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertLessThan(elapsed, 8)
            XCTAssertFalse(fetched.result.exitCode == 0 && fetched.status == 200, fetched.result.summary)
            try await assertFlowError(setup, contains: "could not be decoded")
            try await assertStillServes(setup)
        }
    }

    /// A frame whose length is past the proxy's SETTINGS_MAX_FRAME_SIZE (a 1 MiB DATA frame
    /// announced, a few bytes sent): a frame size error at once (the proxy does not wait for the
    /// megabyte), answered 502.
    func testOversizedFrameIsAnswered502AtOnce() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.markAnswered(request.stream)
            connection.send(HostileH2Origin.frame(type: 0, stream: request.stream, length: 1 << 20, Array(repeating: 0x61, count: 100)))
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "could not be decoded", within: 5)
            try await assertFlowError(setup, contains: "could not be decoded")
            let goAways = setup.hostile.frames.filter { $0.type == 7 }
            XCTAssertEqual(goAways.first?.errorCode, 6, "GOAWAY(FRAME_SIZE_ERROR) to the origin: \(goAways)")
            try await assertStillServes(setup)
        }
    }

    // MARK: 9. flow control and silence

    /// An origin that grants no window past 1,000 bytes while a 200 KB POST is uploaded: the
    /// upload stalls (the request's end waits in the stream for window), and after the client
    /// idle timeout the client gets a 504 saying the origin stopped reading the body, instead of
    /// waiting forever; the origin saw the POST once and no more than its window. (The upstream
    /// timeout is longer here: with both at 2 s, which one spoke first depended on how the
    /// upload's reads were batched.)
    func testOriginGrantingNoWindowEndsTheUploadWithATimeout() async throws {
        let script = HostileH2Origin.Script(settings: { _ in [.initialWindowSize(1000)] }, grantsWindow: false)
        try await run(script, upstreamTimeout: .seconds(4), clientIdleTimeout: .seconds(2)) { setup in
            let upload = setup.proxy.file("upload")
            try Data(repeating: 0x61, count: 200_000).write(to: upload)
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL, ["--data-binary", "@\(upload.path)"])
            assertAnswered(fetched, elapsed: elapsed, status: 504, reason: "stopped reading the request body for 2s", within: 10)
            XCTAssertGreaterThan(elapsed, 1.5)
            XCTAssertEqual(setup.hostile.requests(path: "/index.html").count, 1)
            XCTAssertLessThanOrEqual(setup.hostile.requests(path: "/index.html").first?.bodyBytes ?? 0, 1000)
            try await assertFlowError(setup, contains: "stopped reading the request body for 2s")
        }
    }

    /// An origin that sends the head and the first kilobyte of a 100,000-byte body, then nothing:
    /// the client gets the head and a cut connection after the upstream timeout, and the flow
    /// says the origin went silent.
    func testOriginSilentMidDownloadEndsWithTheUpstreamTimeout() async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.markAnswered(request.stream)
            connection.send(HostileH2Origin.frame(type: 1, flags: 0x4, stream: request.stream,
                                                  HostileH2Origin.headerBlock(status: 200, [("content-length", "100000")]))
                            + HostileH2Origin.frame(type: 0, stream: request.stream, Array(repeating: 0x61, count: 1000)))
        })
        try await run(script, upstreamTimeout: .seconds(2)) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertNotEqual(fetched.result.exitCode, 0, "a cut body looked complete")
            XCTAssertEqual(fetched.body.count, 1000)
            XCTAssertGreaterThan(elapsed, 1.5)
            XCTAssertLessThan(elapsed, 8)
            try await assertFlowError(setup, contains: "sent nothing for 2s")
            try await assertStillServes(setup)
        }
    }

    // MARK: 10. connection-specific response fields

    /// `connection: close` in an h2 response (forbidden, RFC 9113 §8.2.2): the response is
    /// refused with a 502.
    func testConnectionFieldInResponseIsRefused() async throws {
        try await assertRefusesResponseField(("connection", "close"))
    }

    /// `transfer-encoding: chunked` in an h2 response: refused with a 502 (never passed to an
    /// HTTP/1.1 client as framing).
    func testTransferEncodingFieldInResponseIsRefused() async throws {
        try await assertRefusesResponseField(("transfer-encoding", "chunked"))
    }

    private func assertRefusesResponseField(_ field: (String, String), file: StaticString = #filePath,
                                            line: UInt = #line) async throws {
        let script = HostileH2Origin.Script(onRequest: { connection, request in
            guard request.path == "/index.html" else { return connection.respond(request.stream) }
            connection.respond(request.stream, fields: [field], body: "0123456789")
        })
        try await run(script) { setup in
            let (fetched, elapsed) = try await fetch(setup, setup.attackURL)
            assertAnswered(fetched, elapsed: elapsed, status: 502, reason: "connection-specific field, which HTTP/2 forbids", file: file, line: line)
            try await assertFlowError(setup, contains: "connection-specific field, which HTTP/2 forbids", file: file, line: line)
            try await assertStillServes(setup, file: file, line: line)
        }
    }
}
