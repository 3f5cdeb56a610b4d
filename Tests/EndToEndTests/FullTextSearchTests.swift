import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// Flows captured from real traffic are found by word: a large upload (spooled to disk while it
/// crossed) by words at its start, a gzip response by its decoded text, and each only on its side.
final class FullTextSearchTests: XCTestCase {
    private func count(_ filter: String, _ proxy: ProxyHarness) throws -> Int {
        try proxy.repository.count(matching: FlowQuery(filter: try FlowFilter(parsing: filter)))
    }

    func testCapturedTrafficIsFoundByItsWords() async throws {
        try await Fixture.run { proxy, origin in
            let upload = proxy.file("upload.txt")
            let text = "uploadneedle first words\n" + String(repeating: "more text of the upload\n", count: 16_000)
            try Data(text.utf8).write(to: upload)
            let posted = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/echo",
                                              ["-H", "Content-Type: text/plain", "--data-binary", "@" + upload.path])
            XCTAssertEqual(posted.status, 200, posted.result.summary)
            let zipped = try await Curl.fetch(viaProxy: proxy.port, "http://127.0.0.1:\(origin.port)/gzip/300")
            XCTAssertEqual(zipped.status, 200, zipped.result.summary)
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.count, 2)
            XCTAssertGreaterThan(flows.first?.requestBody.size ?? 0, Int64(CapturedBody.blockSize), "the upload was spooled")

            XCTAssertEqual(try count("~fts uploadneedle", proxy), 1)
            XCTAssertEqual(try count("~ftsq 'uploadneedle first'", proxy), 1)
            // The echo origin sends the upload back, untyped: text all the same.
            XCTAssertEqual(try count("~ftss uploadneedle", proxy), 1)
            XCTAssertEqual(try count(#"~ftss '"line 250 of the gzip route"'"#, proxy), 1)
            XCTAssertEqual(try count("~ftsq gzip", proxy), 1, "the URL is the request's")
            XCTAssertEqual(try count("~fts 'route NOT gzip'", proxy), 0)
            XCTAssertEqual(try count("~fts uploadneedle & ~m POST", proxy), 1)

            let search = try FullTextQuery(parsing: "uploadneedle")
            let hits = try proxy.repository.latestFullTextHits(
                search, matching: FlowQuery(filter: try FlowFilter(parsing: "~fts uploadneedle")), limit: 5)
            XCTAssertEqual(hits.first?.excerpts.map(\.field), [.requestBody, .responseBody])
        }
    }
}
