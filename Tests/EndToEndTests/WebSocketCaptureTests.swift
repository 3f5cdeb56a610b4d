import CaptureExport
import CaptureStore
import ChildProcess
import FlowFilter
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// Every WebSocket message is captured, with a real server and client (Debian's
/// `python3-websockets`, which `scripts/test` installs) talking through the proxy: ws through a
/// CONNECT tunnel and wss through interception, with permessage-deflate on and off. The stored
/// messages are what was sent and echoed, byte for byte (compressed ones decoded), in order, with
/// the ping, the pong and both closes; the flow counts them and its bytes.
final class WebSocketCaptureTests: XCTestCase {
    private struct Run {
        var sent: [(kind: CapturedMessage.Kind, payload: Data)]
        var compressed: Bool
    }

    private func run(proxyPort: Int, arguments: [String]) async throws -> Run {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Support/Scripts/websocket_through_proxy.py")
        let run = try await ChildProcess.run(HTTP2GRPCTests.python, [script.path, "--proxy-port", String(proxyPort)] + arguments,
                                             timeout: 60)
        let stderr = String(decoding: run.stderr, as: UTF8.self)
        guard run.exitCode == 0 else {
            if stderr.contains("No module named 'websockets'") {
                throw XCTSkip("python3-websockets is missing: run scripts/test (it installs it)")
            }
            XCTFail("client failed: \(stderr)")
            return Run(sent: [], compressed: false)
        }
        let object = try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any]
        let sent = (object?["sent"] as? [[String]] ?? []).map { pair in
            (kind: CapturedMessage.Kind(rawValue: pair[0]) ?? .close, payload: Data(hex: pair[1]))
        }
        return Run(sent: sent, compressed: object?["compression"] as? Bool ?? false)
    }

    /// The stored messages of the one WebSocket flow, checked against what the client sent (each
    /// echoed back), then ping, pong, close both ways.
    private func assertCaptured(_ run: Run, proxy: ProxyHarness, file: StaticString = #filePath, line: UInt = #line) async throws {
        XCTAssertEqual(run.sent.count, 4, file: file, line: line)
        // The flow is finished (both sides closed) a moment after the client returns.
        var flow: Flow?
        for _ in 0..<100 {
            flow = try proxy.flushedFlows().first { $0.status == 101 }
            if let flow, flow.messageCount >= 12, flow.bytesDown > 0 { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let seen = try proxy.flushedFlows().map { "\($0.method) \($0.url) \($0.status ?? 0) \($0.error ?? "")" }
        let upgrade = try XCTUnwrap(flow, "no 101 flow: \(seen)", file: file, line: line)
        let messages = try proxy.repository.messages(flowID: try XCTUnwrap(upgrade.id))
        var expected: [(CapturedMessage.Direction, CapturedMessage.Kind, Data)] = []
        for message in run.sent {
            expected.append((.sent, message.kind, message.payload))
            expected.append((.received, message.kind, message.payload))
        }
        expected += [(.sent, .ping, Data("are you there".utf8)), (.received, .pong, Data("are you there".utf8))]
        XCTAssertEqual(messages.count, expected.count + 2, "\(messages.map { "\($0.direction) \($0.kind)" })",
                       file: file, line: line)
        for (message, (direction, kind, payload)) in zip(messages, expected) {
            XCTAssertEqual(message.direction, direction, file: file, line: line)
            XCTAssertEqual(message.kind, kind, file: file, line: line)
            XCTAssertEqual(message.payload, payload, "\(direction) \(kind)", file: file, line: line)
            XCTAssertEqual(message.size, Int64(payload.count), file: file, line: line)
            XCTAssertFalse(message.truncated, file: file, line: line)
        }
        let large = messages.first { $0.size > 50_000 }
        XCTAssertEqual(large?.compressed, run.compressed, "the large message went compressed iff deflate was on",
                       file: file, line: line)
        let closes = messages.suffix(2)
        XCTAssertEqual(closes.map(\.kind), [.close, .close], file: file, line: line)
        XCTAssertEqual(closes.first?.closeCode, 1000, file: file, line: line)
        XCTAssertEqual(closes.first?.closeReason, "done", file: file, line: line)
        XCTAssertEqual(upgrade.messageCount, messages.count, file: file, line: line)
        let wire = messages.reduce(Int64(0)) { $0 + $1.size }
        XCTAssertGreaterThan(upgrade.bytesUp + upgrade.bytesDown, run.compressed ? 1000 : wire, "bytes relayed were counted",
                             file: file, line: line)
        XCTAssertNil(upgrade.error, file: file, line: line)
    }

    /// `~bq`/`~bs` match what the client sent / the server sent over the socket, and the HAR export
    /// carries every message as `_webSocketMessages`.
    private func assertFilterAndExport(_ proxy: ProxyHarness, scratch: TemporaryDirectory,
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        func matching(_ filter: String) throws -> [Int?] {
            var statuses: [Int?] = []
            try proxy.repository.forEachFlow(matching: FlowQuery(filter: try FlowFilter(parsing: filter))) { statuses.append($0.status) }
            return statuses
        }
        XCTAssertEqual(try matching("~bq fragmented"), [101], file: file, line: line)
        XCTAssertEqual(try matching("~bs fragmented"), [101], "echoed back, so the server sent it too", file: file, line: line)
        XCTAssertEqual(try matching("~b nowhere-said"), [], file: file, line: line)
        let har = scratch.url.appendingPathComponent("ws.har")
        let written = try HARFileExport(query: FlowQuery(), creatorVersion: "test").write(from: proxy.repository, to: har.path)
        XCTAssertGreaterThan(written, 0, file: file, line: line)
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any]
        let entries = (root?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let messages = entries.compactMap { $0["_webSocketMessages"] as? [[String: Any]] }.first ?? []
        XCTAssertEqual(messages.count, 12, file: file, line: line)
        XCTAssertEqual(messages.first?["data"] as? String, "hello", file: file, line: line)
    }

    func testWebSocketThroughATunnelWithAndWithoutCompression() async throws {
        let scratch = try TemporaryDirectory("proxyapp-ws")
        defer { scratch.remove() }
        let tls = try TLSFixtures(directory: scratch.url)
        for compression in [true, false] {
            // With interception on, plain HTTP inside a tunnel is proxied as HTTP (and captured).
            let proxy = try await ProxyHarness.start(interception: { _ in try tls.interception(pins: nil) })
            do {
                let run = try await run(proxyPort: proxy.port, arguments: compression ? [] : ["--no-compression"])
                try await assertCaptured(run, proxy: proxy)
                try assertFilterAndExport(proxy, scratch: scratch)
            } catch {
                await proxy.shutdown()
                throw error
            }
            await proxy.shutdown()
        }
    }

    func testSecureWebSocketThroughInterception() async throws {
        let scratch = try TemporaryDirectory("proxyapp-wss")
        defer { scratch.remove() }
        let origin = try await SelfSignedCertificate.make(in: scratch.url)
        let key = origin.key
        let certificate = origin.certificate
        let tls = try TLSFixtures(directory: scratch.url)
        let proxy = try await ProxyHarness.start(interception: { _ in
            try tls.interception(pins: nil, upstreamCA: certificate)
        })
        do {
            let run = try await run(proxyPort: proxy.port, arguments: [
                "--cert", certificate.path, "--key", key.path, "--proxy-ca", tls.proxyCAFile.path])
            try await assertCaptured(run, proxy: proxy)
            XCTAssertEqual(try proxy.flushedFlows().first { $0.status == 101 }?.scheme, "https")
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }
}

private extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}
