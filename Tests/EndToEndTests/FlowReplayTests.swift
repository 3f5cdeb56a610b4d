import Foundation
import NIOConcurrencyHelpers
import ProxyEngine
import ProxyModel
import XCTest

/// Replays (`FlowReplayer`): a captured request sent again through the engine with no client
/// connection reaches the origin as the original did — request line, headers, body bytes —
/// over TLS for a decrypted flow, and is captured as a new flow linked to its original. Rules
/// apply again unless turned off; nothing a client sends can pose as a replay.
final class FlowReplayTests: XCTestCase {
    func testPlainAndHTTPSFlowsReachTheOriginAsTheyFirstDid() async throws {
        try await InterceptingFixture.run { fixture in
            let cases: [(name: String, https: Bool, path: String, arguments: [String])] = [
                ("GET with headers", false, "/echo?q=a%20b&x=1",
                 ["-H", "X-Custom: one", "-H", "X-Custom: two", "-H", "Cookie: a=1; b=2"]),
                ("POST with a binary body", false, "/echo",
                 ["-H", "Content-Type: application/octet-stream", "--data-binary", "\u{01}\u{02}bytes\nline"]),
                ("HTTPS PUT through interception", true, "/echo/item?tls=1",
                 ["-X", "PUT", "--cacert", fixture.tls.proxyCAFile.path, "-H", "Authorization: Bearer x",
                  "--data-binary", "over tls"]),
            ]
            var expected = 0
            for item in cases {
                let origin = item.https ? fixture.tlsOrigin : fixture.origin
                let url = item.https ? fixture.tlsURL(item.path) : origin.url(item.path)
                let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, url, item.arguments)
                XCTAssertEqual(fetched.status, 200, "\(item.name): \(fetched.result.summary)")
                expected += 1
                let originals = try await requestFlows(fixture.proxy, count: expected)
                let original = try XCTUnwrap(originals.last, item.name)
                let received = origin.log.requests.count

                let outcomes = await fixture.proxy.replayer().run([ReplayRequest(flow: original)], concurrency: 1,
                                                                  keepingBody: 1 << 20)
                XCTAssertEqual(outcomes.first?.status, 200, "\(item.name): \(String(describing: outcomes.first))")
                XCTAssertEqual(outcomes.first.map { Data($0.body) }, fetched.body, item.name)
                expected += 1
                let replays = try await requestFlows(fixture.proxy, count: expected)
                let replayed = try XCTUnwrap(replays.last, item.name)

                let seen = origin.log.requests
                XCTAssertEqual(seen.count, received + 1, item.name)
                guard seen.count == received + 1, received > 0 else { continue }
                let first = seen[received - 1]
                let again = seen[received]
                XCTAssertEqual(again.method, first.method, item.name)
                XCTAssertEqual(again.uri, first.uri, item.name)
                XCTAssertEqual(again.version, first.version, item.name)
                XCTAssertEqual(again.headers.filter { $0.name.lowercased() != "content-length" },
                               first.headers.filter { $0.name.lowercased() != "content-length" }, item.name)
                XCTAssertEqual(again.headers.first(named: "content-length"), first.headers.first(named: "content-length"),
                               item.name)
                XCTAssertEqual(again.bodyLength, first.bodyLength, item.name)
                XCTAssertEqual(again.bodyChecksum, first.bodyChecksum, item.name)

                XCTAssertEqual(replayed.replayOf, original.id, item.name)
                XCTAssertNil(original.replayOf, item.name)
                XCTAssertEqual(replayed.clientAddress, "replay", item.name)
                XCTAssertEqual(replayed.url, original.url, item.name)
                XCTAssertEqual(replayed.status, 200, item.name)
                XCTAssertEqual(replayed.requestBody.bytes, original.requestBody.bytes, item.name)
                XCTAssertFalse(replayed.requestHeaders.contains { $0.name.lowercased() == "x-proxyapp-replay-of" }, item.name)
                if item.https {
                    XCTAssertEqual(replayed.scheme, "https")
                    XCTAssertNotNil(replayed.tls?.upstreamVersion, "the replay went to the origin over TLS")
                }
            }
        }
    }

    /// A chunked original is sent again framed by Content-Length, with the same body bytes: framing
    /// is decided by the replay, never copied.
    func testAChunkedOriginalIsReplayedWithItsBodyFramedAgain() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("POST \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
            let stored = try await proxy.waitForFlows(count: 1)
            let original = try XCTUnwrap(stored.first)
            XCTAssertEqual(original.requestBody.bytes, Data("hello world".utf8))

            let outcome = await proxy.replayer().send(ReplayRequest(flow: original), keepingBody: 1024)
            XCTAssertEqual(outcome.status, 200, String(describing: outcome.failure))
            XCTAssertEqual(outcome.body, Array("hello world".utf8))
            let received = try XCTUnwrap(origin.log.requests.last)
            XCTAssertEqual(received.headers.first(named: "content-length"), "11")
            XCTAssertNil(received.headers.first(named: "transfer-encoding"))
            XCTAssertEqual(origin.log.requests.count, 2)
        }
    }

    /// Rules act on a replay as on any request; `ignoresRules` (`--no-rules`) forwards it as it is.
    func testRulesApplyToReplaysUnlessTurnedOff() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: No admin
                    match: { host: 127.0.0.1, path: /echo/admin }
                    block: { status: 403 }
                """)
            let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo/admin"))
            XCTAssertEqual(fetched.status, 403)
            let blocked = try await requestFlows(fixture.proxy, count: 1)
            let original = try XCTUnwrap(blocked.last)
            XCTAssertEqual(fixture.origin.log.requests.count, 0)

            let ruled = await fixture.proxy.replayer().send(ReplayRequest(flow: original))
            XCTAssertEqual(ruled.status, 403)
            XCTAssertEqual(fixture.origin.log.requests.count, 0, "the block rule held the replay too")
            let unruled = await fixture.proxy.replayer(ignoresRules: true).send(ReplayRequest(flow: original))
            XCTAssertEqual(unruled.status, 200)
            XCTAssertEqual(fixture.origin.log.requests.map(\.uri), ["/echo/admin"])

            let flows = try await requestFlows(fixture.proxy, count: 3)
            XCTAssertEqual(flows.count, 3)
            XCTAssertEqual(flows.dropFirst().map(\.replayOf), [original.id, original.id])
            XCTAssertEqual(flows.dropFirst().map(\.appliedRules), [["No admin"], []])
        }
    }

    /// The link header counts only on the replayer's own connection: from a client it is an
    /// ordinary header, forwarded, and its flow is no replay; nor may a client ask for an
    /// `https://` URL in absolute form, which only replays may.
    func testAClientCannotPoseAsAReplay() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["-H", "X-ProxyApp-Replay-Of: 1"])
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(origin.log.requests.last?.headers.first(named: "x-proxyapp-replay-of"), "1")
            let client = try RawClient(port: proxy.port)
            try client.send("GET https://127.0.0.1:\(origin.port)/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            var answer = Data()
            _ = try client.read(timeout: 10) { data in
                answer = data
                return data.range(of: Data("\r\n\r\n".utf8)) != nil
            }
            XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 501"),
                          String(decoding: answer.prefix(200), as: UTF8.self))
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.replayOf, nil)
            XCTAssertNotEqual(flows.first?.clientAddress, "replay")
        }
    }

    /// What cannot be sent is refused in words before anything is written; an origin that is gone
    /// is the proxy's 502 with its reason, captured like any failure.
    func testRefusalsAndFailuresAreSaidInWords() async throws {
        try await Fixture.run { proxy, _ in
            let replayer = proxy.replayer()
            let ftp = await replayer.send(ReplayRequest(method: "GET", url: "ftp://example.com/", headers: [], body: []))
            XCTAssertNil(ftp.status)
            XCTAssertEqual(ftp.failure, "cannot send ftp://example.com/: only http:// and https:// URLs can be sent")
            let method = await replayer.send(ReplayRequest(method: "GET X", url: "http://example.com/", headers: [], body: []))
            XCTAssertEqual(method.failure, "cannot send a request whose method 'GET X' is not an HTTP token")

            let closed = try ListeningSocket.refusing()
            let gone = await replayer.send(ReplayRequest(method: "GET", url: "http://127.0.0.1:\(closed.port)/", headers: [],
                                                         body: []), keepingBody: 4096)
            XCTAssertEqual(gone.status, 502, String(describing: gone.failure))
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertNil(flows.first?.status, "a failed exchange is stored without a status")
            XCTAssertTrue(flows.first?.error?.contains("refused") == true, String(describing: flows.first?.error))
            XCTAssertNil(flows.first?.replayOf, "a composed request links to no flow")
        }
    }

    /// Many replays at once: every one answered, in the requests' order, each captured once.
    func testConcurrentReplaysAreEachAnsweredAndCaptured() async throws {
        try await Fixture.run { proxy, origin in
            let requests = (0..<40).map { index in
                ReplayRequest(method: "POST", url: origin.url("/echo?n=\(index)"), headers: [HeaderField(name: "Host", value: origin.authority)],
                              body: Array("body \(index)".utf8))
            }
            let outcomes = await proxy.replayer().run(requests, concurrency: 8, keepingBody: 64)
            XCTAssertEqual(outcomes.map(\.status), Array(repeating: 200, count: 40))
            XCTAssertEqual(outcomes.map { String(decoding: $0.body, as: UTF8.self) }, (0..<40).map { "body \($0)" })
            let flows = try await proxy.waitForFlows(count: 40)
            XCTAssertEqual(flows.count, 40)
            XCTAssertEqual(Set(flows.map(\.path)), Set((0..<40).map { "/echo?n=\($0)" }))
        }
    }

    /// What the engine forwards for a client, a replay sends too: URLs with `|`, `{}` and `"`
    /// (which NIO's strict client check would refuse); HTTP/2 pseudo-fields a HAR keeps are not
    /// headers and are left out; headers the original's `Connection` named stay hop-by-hop.
    func testOddButForwardableRequestsReplayAsTheyWent() async throws {
        try await Fixture.run { proxy, origin in
            let path = "/echo/a|b{c}\"d^e"
            let replayer = proxy.replayer()
            let odd = await replayer.send(ReplayRequest(method: "GET", url: origin.url(path), headers: [], body: []))
            XCTAssertEqual(odd.status, 200, String(describing: odd.failure))
            XCTAssertEqual(origin.log.requests.last?.uri, path)

            let harStyle = await replayer.send(ReplayRequest(
                method: "GET", url: origin.url("/echo?h2"),
                headers: [HeaderField(name: ":method", value: "GET"), HeaderField(name: ":authority", value: origin.authority),
                          HeaderField(name: "accept", value: "*/*")],
                body: []))
            XCTAssertEqual(harStyle.status, 200, String(describing: harStyle.failure))
            XCTAssertFalse(origin.log.requests.last?.headers.contains { $0.name.hasPrefix(":") } ?? true)
            XCTAssertEqual(origin.log.requests.last?.headers.first(named: "accept"), "*/*")

            let named = await replayer.send(ReplayRequest(
                method: "GET", url: origin.url("/echo?conn"),
                headers: [HeaderField(name: "Connection", value: "X-Secret, keep-alive"), HeaderField(name: "X-Secret", value: "s"),
                          HeaderField(name: "X-Kept", value: "k")],
                body: []))
            XCTAssertEqual(named.status, 200)
            XCTAssertNil(origin.log.requests.last?.headers.first(named: "x-secret"))
            XCTAssertEqual(origin.log.requests.last?.headers.first(named: "x-kept"), "k")

            // `Connection` naming Host or framing is ignored, never obeyed (as for a client).
            let framing = await replayer.send(ReplayRequest(
                method: "POST", url: origin.url("/echo?framing"),
                headers: [HeaderField(name: "Host", value: origin.authority), HeaderField(name: "Connection", value: "Host, Content-Length")],
                body: Array("body kept".utf8)), keepingBody: 64)
            XCTAssertEqual(framing.body, Array("body kept".utf8))
            XCTAssertEqual(origin.log.requests.last?.headers.first(named: "host"), origin.authority)
            XCTAssertEqual(origin.log.requests.last?.headers.first(named: "content-length"), "9")

            for (name, value) in [("Bad Name", "v"), ("X", "a\r\nInjected: 1")] {
                let refused = await replayer.send(ReplayRequest(method: "GET", url: origin.url("/"), headers: [HeaderField(name: name, value: value)], body: []))
                XCTAssertNil(refused.status, name)
                XCTAssertNotNil(refused.failure, name)
            }
            let spaced = await replayer.send(ReplayRequest(method: "GET", url: origin.url("/a b"), headers: [], body: []))
            XCTAssertTrue(spaced.failure?.contains("may not hold spaces") == true, String(describing: spaced.failure))
            XCTAssertEqual(origin.log.requests.count, 4, "refused requests reach no origin")
        }
    }

    /// A replay stops starting requests once cancelled (its client went away), and once the proxy
    /// stops; what was not sent says why, and the proxy shuts down without waiting for the rest.
    func testAReplayStopsWhenCancelledOrWhenTheProxyStops() async throws {
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown() } }
        let proxy = try await ProxyHarness.start()
        let request = ReplayRequest(method: "GET", url: origin.url("/echo"), headers: [], body: [])
        let sent = NIOLockedValueBox(0)
        let outcomes = await proxy.replayer().run([request], repeating: 200, concurrency: 2, isCancelled: {
            sent.withLockedValue { count in
                count += 1
                return count > 10
            }
        })
        XCTAssertEqual(outcomes.count, 200)
        XCTAssertEqual(outcomes.filter { $0.status == 200 }.count, 10)
        XCTAssertEqual(outcomes.last?.failure, "not sent: the replay was stopped")

        let running = Task { await proxy.replayer().run([request], repeating: 5_000, concurrency: 8) }
        while origin.log.requests.count < 30 { try await Task.sleep(nanoseconds: 5_000_000) }
        await proxy.shutdown()
        let stopped = await running.value
        XCTAssertGreaterThan(stopped.filter { $0.status == 200 }.count, 0)
        XCTAssertEqual(stopped.last?.failure, "not sent: the proxy is stopping")
    }

    /// The HTTP flows stored (CONNECTs left out), oldest first, once `count` of them are there.
    private func requestFlows(_ proxy: ProxyHarness, count: Int) async throws -> [Flow] {
        let deadline = Date().addingTimeInterval(10)
        var flows: [Flow] = []
        repeat {
            flows = try proxy.flushedFlows().filter { $0.kind == .http && $0.method != "CONNECT" }
            if flows.count >= count { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        } while Date() < deadline
        return flows
    }
}
