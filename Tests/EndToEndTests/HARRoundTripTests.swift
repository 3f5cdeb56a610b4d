import BodyCodec
import CaptureStore
import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Capture → export → import → export gives the same HAR entries, for real traffic through the
/// proxy: plain and decrypted HTTPS exchanges, text, binary and gzip bodies, a 404, a chunked
/// response, a CONNECT tunnel and an exchange whose origin refused the connection.
///
/// The second export reads a fresh store filled by `HARReader` + `insertAll`, so the test covers
/// the writer, the reader, the body restorer and the store's round trip together.
final class HARRoundTripTests: XCTestCase {
    /// Entry fields that may legitimately differ between the two exports, with the reason.
    private static let fieldsThatMayDiffer: [String: String] = [
        "_id": "assigned by each store on insert; the imported store numbers its flows itself",
    ]

    func testExportImportExportKeepsEveryEntry() async throws {
        try await InterceptingFixture.run { setup in
            let expectedCount = try await captureTraffic(setup)
            let flows = try await setup.proxy.waitForFlows(count: expectedCount)
            XCTAssertEqual(flows.count, expectedCount, "flows captured: \(flows.map(\.url))")
            // A marked flow carries `_marked` through the round trip.
            let markedID = try XCTUnwrap(flows.first { $0.method == "POST" }?.id)
            XCTAssertTrue(try setup.proxy.repository.setMarked(true, id: markedID))
            let originals = try allFlows(in: setup.proxy.repository)
            assertCoverage(originals)

            let first = try exportHAR(from: setup.proxy.repository, to: setup.proxy.file("first.har"))
            let imported = try HARReader.flows(from: first)
            let secondStore = TrafficRepository(
                database: try TrafficDatabase(path: setup.proxy.file("imported.sqlite").path))
            try secondStore.insertAll(imported)
            let second = try exportHAR(from: secondStore, to: setup.proxy.file("second.har"))

            try assertSameEntries(first, second)
            let reread = try allFlows(in: secondStore)
            XCTAssertEqual(reread.count, originals.count)
            for (original, copy) in zip(originals, reread) {
                assertImported(copy, matches: original)
            }
        }
    }

    // MARK: traffic

    /// Sends every kind of exchange the test covers and returns how many flows it makes.
    private func captureTraffic(_ setup: InterceptingFixture) async throws -> Int {
        let proxy = setup.proxy.port
        let origin = setup.origin
        var count = 0
        func fetch(_ url: String, _ arguments: [String] = [], status: Int) async throws {
            let fetched = try await Curl.fetch(viaProxy: proxy, url, arguments)
            XCTAssertEqual(fetched.status, status, "\(url): \(fetched.result.summary)")
            count += 1
        }
        try await fetch(origin.url("/echo?q=round%20trip&lang=en&flag"), ["-H", "X-Test: query"], status: 200)
        try await fetch(origin.url("/echo"), ["-H", "Content-Type: text/plain; charset=utf-8",
                                              "--data-binary", "text body: grüße, \"quotes\" and\nnew lines"],
                        status: 200)
        let binary = setup.proxy.file("binary.bin")
        try Data([0x00, 0xFF, 0x10, 0x00, 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(0...255))
            .write(to: binary)
        try await fetch(origin.url("/echo"), ["-H", "Content-Type: application/octet-stream", "-H", "Expect:",
                                              "--data-binary", "@\(binary.path)"], status: 200)
        try await fetch(origin.url("/gzip/300"), ["-H", "Accept-Encoding: gzip"], status: 200)
        // Two rules act on this one (names that need escaping in JSON): `_rules` round-trips.
        try setup.useRules(#"""
            rules:
              - name: "Map remote: staging"
                match: { host: 127.0.0.1, path: /no/such/* }
                map_remote: { to: "\#(origin.url(""))" }
              - name: 'Rewrite "UA" \ v2'
                match: { host: 127.0.0.1, path: /no/such/* }
                rewrite: { response_headers: { add: { X-Rule: "1" } } }
            """#)
        try await fetch(origin.url("/no/such/route"), status: 404)
        try setup.useRules("rules: []")
        try await fetch(origin.url("/chunked/40000"), status: 200)
        try await fetch(setup.tlsURL("/echo?secure=1"), ["--cacert", setup.tls.proxyCAFile.path,
                                                         "-H", "Content-Type: application/json",
                                                         "--data-binary", #"{"over":"tls"}"#], status: 200)
        let refused = try ListeningSocket.refusing()
        defer { refused.close() }
        try await fetch("http://127.0.0.1:\(refused.port)/refused", status: 502)
        try await relayThroughTunnel(proxyPort: proxy)
        return count + 1
    }

    /// A CONNECT whose first bytes are neither TLS nor HTTP: relayed and recorded as a tunnel.
    private func relayThroughTunnel(proxyPort: Int) async throws {
        let echo = try await TCPEchoServer.start()
        do {
            let client = try RawClient(port: proxyPort)
            try client.send("CONNECT 127.0.0.1:\(echo.port) HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            let message = "opaque bytes, not tls and not http\n"
            try client.send(message)
            XCTAssertEqual(try client.receive(count: message.utf8.count, timeout: 10), Data(message.utf8))
            client.close()
        } catch {
            await echo.shutdown()
            throw error
        }
        await echo.shutdown()
    }

    /// The capture holds what the test means to round-trip (a guard against a silently thinner test).
    private func assertCoverage(_ flows: [Flow]) {
        XCTAssertTrue(flows.contains { $0.kind == .tunnel && $0.bytesUp > 0 }, "a tunnel")
        XCTAssertTrue(flows.contains { $0.scheme == "https" && $0.tls != nil }, "a decrypted HTTPS exchange")
        XCTAssertTrue(flows.contains { $0.error != nil }, "a failed exchange")
        XCTAssertTrue(flows.contains { $0.status == 404 }, "a 404")
        XCTAssertTrue(flows.contains { $0.responseHeaders.first(named: "Content-Encoding") == "gzip" }, "a gzip body")
        XCTAssertTrue(flows.contains { $0.responseHeaders.first(named: "Transfer-Encoding") == "chunked" }, "chunked")
        XCTAssertTrue(flows.contains { $0.requestBody.bytes.contains(0) }, "a binary request body")
        XCTAssertTrue(flows.contains(where: \.marked), "a marked flow")
        XCTAssertTrue(flows.contains { $0.appliedRules == ["Map remote: staging", #"Rewrite "UA" \ v2"#] },
                      "a flow two rules acted on")
    }

    // MARK: export and compare

    private func allFlows(in repository: TrafficRepository) throws -> [Flow] {
        var flows: [Flow] = []
        try repository.forEachFlow(matching: FlowQuery()) { flows.append($0) }
        return flows
    }

    /// Writes every flow of `repository` to `file` as `proxyapp export --har` does and reads it back.
    private func exportHAR(from repository: TrafficRepository, to file: URL) throws -> Data {
        let output = try FileOutput(creatingFileAt: file.path)
        let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "e2e"),
                                   pageStarted: try repository.earliestStart(matching: FlowQuery()) ?? Date(),
                                   pageTitle: "round trip", redaction: false)
        try repository.forEachFlow(matching: FlowQuery()) { try writer.write($0) }
        try writer.finish()
        try output.close()
        return try Data(contentsOf: file)
    }

    private func assertSameEntries(_ first: Data, _ second: Data, file: StaticString = #filePath,
                                   line: UInt = #line) throws {
        let firstEntries = try entries(first)
        let secondEntries = try entries(second)
        XCTAssertEqual(firstEntries.count, secondEntries.count, file: file, line: line)
        let ignored = Set(Self.fieldsThatMayDiffer.keys)
        for (index, (left, right)) in zip(firstEntries, secondEntries).enumerated() {
            let comparable = { (entry: [String: Any]) in NSDictionary(dictionary: entry.filter { !ignored.contains($0.key) }) }
            if comparable(left) != comparable(right) {
                let differences = JSONDifference.lines(left, right, path: "entries[\(index)]", ignoring: ignored)
                XCTFail("entry \(index) (\(left["request"].flatMap { ($0 as? [String: Any])?["url"] } ?? "?")) changed "
                        + "in the round trip:\n  " + differences.joined(separator: "\n  "), file: file, line: line)
            }
        }
    }

    private func entries(_ document: Data) throws -> [[String: Any]] {
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        let log = try XCTUnwrap(root["log"] as? [String: Any])
        return try XCTUnwrap(log["entries"] as? [[String: Any]])
    }

    // MARK: flows

    /// The imported flow keeps what the store keeps of the original (`keptFields`), and its
    /// timings to the microsecond with HAR's conventions (`HARTimingsExpectation`).
    private func assertImported(_ copy: Flow, matches original: Flow, file: StaticString = #filePath,
                                line: UInt = #line) {
        let what = "\(original.method) \(original.url)"
        for (name, value) in Self.keptFields {
            XCTAssertEqual(value(copy), value(original), "\(name) of \(what)", file: file, line: line)
        }
        let expected = HARTimingsExpectation.afterImport(of: original)
        for (name, phase) in HARTimingsExpectation.phases {
            XCTAssertEqual(copy.timings[keyPath: phase], expected[keyPath: phase], accuracy: 0.0015,
                           "timings.\(name) of \(what): original \(original.timings)", file: file, line: line)
        }
    }

    /// What the store keeps of a flow and an import must restore, by name. Bodies are decoded
    /// (import encodes them again, so a gzip body's bytes may differ; its content may not).
    private static let keptFields: [(String, @Sendable (Flow) -> AnyHashable?)] = [
        ("kind", { $0.kind }), ("method", { $0.method }), ("scheme", { $0.scheme }), ("url", { $0.url }),
        ("httpVersion", { $0.httpVersion }), ("clientAddress", { $0.clientAddress }), ("startedAt", { $0.startedAt }),
        ("requestHeaders", { $0.requestHeaders }), ("status", { $0.status }), ("reason", { $0.reason }),
        ("responseHeaders", { $0.responseHeaders }),
        ("decoded request body", { decoded($0.requestBody, $0.requestHeaders) }),
        ("decoded response body", { decoded($0.responseBody, $0.responseHeaders) }),
        ("requestBody.size", { $0.requestBody.size }), ("responseBody.size", { $0.responseBody.size }),
        ("requestBody.truncated", { $0.requestBody.truncated }),
        ("responseBody.truncated", { $0.responseBody.truncated }),
        ("tls", { $0.tls }), ("serverAddress", { $0.serverAddress }), ("error", { $0.error }),
        ("marked", { $0.marked }), ("note", { $0.note }), ("appliedRules", { $0.appliedRules }),
        ("bytesUp", { $0.bytesUp }), ("bytesDown", { $0.bytesDown }),
    ]

    private static func decoded(_ body: CapturedBody, _ headers: [HeaderField]) -> [UInt8] {
        BodyDecoder.decode([UInt8](body.bytes), contentEncoding: headers.first(named: "Content-Encoding")).bytes
    }
}
