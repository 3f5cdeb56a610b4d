import Compressors
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ProxyModel
import Rules
import TestSupport
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// A rule's action never crashes, hangs or blocks the connection it acts on: a file read that
/// outlives its client, a local answer to an upgrade, a compressed body to rewrite, a held body
/// whose pooled connection closes, a 304 under a status rewrite, a block rule on a CONNECT.
final class RuleActionSafetyTests: XCTestCase {
    private func scratch() throws -> URL {
        try makeTemporaryDirectory().url
    }

    /// A map-local file read that completes after the client left (its handler gone) neither
    /// crashes nor writes: the flow records the client leaving.
    func testFileReadCompletingAfterTheClientLeft() throws {
        let folder = try scratch()
        try Data(repeating: 0x61, count: 200 << 10).write(to: folder.appendingPathComponent("big.bin"))
        let work = DeferredWork()
        var harness: EngineHarness? = try EngineHarness(rules: """
            rules:
              - match: { host: m.test }
                map_local: { file: big.bin }
            """, rulesDirectory: folder.path, blockingWork: work)
        try harness!.clientSends("GET http://m.test/big HTTP/1.1\r\nHost: m.test\r\n\r\n")
        work.releaseNext()  // the open
        harness!.loop.run()
        XCTAssertTrue(try harness!.clientReceived().hasPrefix("HTTP/1.1 200 OK\r\n"))
        XCTAssertEqual(work.pendingCount, 1, "the first chunk is being read")
        try harness!.client.close().wait()
        harness!.loop.run()
        let sink = harness!.sink
        let loop = harness!.loop
        harness = nil  // the pipeline and its handlers may be gone now
        while work.pendingCount > 0 { work.releaseNext() }  // the read, then the close
        loop.run()
        XCTAssertEqual(sink.flows.count, 1)
        XCTAssertEqual(sink.flows.first?.error, "client closed the connection before the exchange completed")
    }

    /// A local answer to a request that asked to upgrade closes the connection: NIO's decoder
    /// reads nothing after such a request, so keep-alive would hang the next one.
    func testLocalAnswerToAnUpgradeRequestCloses() throws {
        let harness = try EngineHarness(rules: "rules: [ { match: { host: ws.test }, block: {} } ]")
        try harness.clientSends("GET http://ws.test/ HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), answer)
        XCTAssertTrue(answer.contains("Connection: close\r\n"), answer)
        XCTAssertFalse(harness.client.isActive)
    }

    /// A small compressed body is decoded off the event loop (it may decode to megabytes), and
    /// what it decodes to is bounded by the rewrite limit.
    func testCompressedBodiesAreRewrittenOffTheLoop() throws {
        let work = CountingWork()
        let loop = EmbeddedEventLoop()
        var held = HeldBody(limit: 1 << 20)
        let text = Array(repeating: UInt8(ascii: "a"), count: 2 << 20)
        _ = held.append(ByteBuffer(bytes: Compressors.gzip(text)))
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "Content-Encoding", value: "gzip")
        let result = try ExchangeRewriter.rewrite(
            held, headers: headers, replacements: [TextReplacement(pattern: .literal("a"), replacement: "b")],
            side: "response", limit: 1 << 20, work: work, on: loop).wait()
        XCTAssertEqual(work.calls, 1)
        XCTAssertFalse(result.decoded, "2 MiB of text is past the 1 MiB limit")
        XCTAssertEqual(result.note?.hasPrefix("rewrite: response body not rewritten: gzip body decodes to more than"), true,
                       result.note ?? "")
    }

    /// A held request body takes no upstream connection until it is whole: a pooled one the
    /// origin closes meanwhile is not used, and the rewritten request goes out on a new one.
    func testHeldRequestDoesNotUseAConnectionTheOriginClosed() throws {
        let harness = try EngineHarness(rules: """
            rules:
              - match: { host: o.test, method: POST }
                rewrite: { request_body: { find: a, replace: b } }
            """)
        try harness.clientSends("GET http://o.test/ HTTP/1.1\r\nHost: o.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 204 No Content\r\n\r\n")
        _ = try harness.clientReceived()
        let pooled = try XCTUnwrap(harness.upstream)
        _ = try harness.originReceived(on: pooled)

        try harness.clientSends("POST http://o.test/ HTTP/1.1\r\nHost: o.test\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc")
        pooled.pipeline.fireChannelInactive()  // the origin closes the idle connection
        try harness.clientSends("defghij")
        XCTAssertEqual(harness.connector.connects.count, 2)
        XCTAssertEqual(try harness.originReceived(),
                       "POST / HTTP/1.1\r\nHost: o.test\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nbbcdefghij")
        try harness.originSends("HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 204"))
    }

    /// A rewrite status does not replace a 304's: its Content-Length describes a body that is
    /// never sent, so a 200 with it would hang the client.
    func testRewriteStatusLeavesNotModifiedAlone() throws {
        let harness = try EngineHarness(rules: "rules: [ { match: { host: c.test }, rewrite: { status: 200 } } ]")
        try harness.clientSends("GET http://c.test/ HTTP/1.1\r\nHost: c.test\r\nIf-None-Match: x\r\n\r\n")
        try harness.originSends("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nETag: x\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
        try harness.clientSends("GET http://c.test/ HTTP/1.1\r\nHost: c.test\r\n\r\n")
        try harness.originSends("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        XCTAssertTrue(try harness.clientReceived().hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    /// A block rule with a 2xx status refuses a CONNECT with 403 (a 2xx would open the tunnel),
    /// and a rule name with a backslash or quote stays a valid Proxy-Status string.
    func testConnectRefusalStatusAndEscaping() throws {
        let harness = try EngineHarness(rules: #"""
            rules:
              - name: 'a \ "b"'
                match: { host: t.test }
                block: { status: 204 }
            """#)
        try harness.clientSends("CONNECT t.test:443 HTTP/1.1\r\nHost: t.test:443\r\n\r\n")
        let answer = try harness.clientReceived()
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), answer)
        XCTAssertTrue(answer.contains(#"details="blocked by rule 'a \\ \"b\"'""#), answer)
        XCTAssertEqual(harness.sink.flows.first?.status, 403)
    }
}

/// Counts the work handed to it and runs it at once.
final class CountingWork: BlockingWork, @unchecked Sendable {
    private(set) var calls = 0
    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        calls += 1
        return eventLoop.makeCompletedFuture { try work() }
    }
}
