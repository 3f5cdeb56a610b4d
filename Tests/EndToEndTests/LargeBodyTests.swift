import CaptureStore
import Foundation
import ProxyModel
import XCTest

/// Bodies larger than any buffer, streamed both ways, with both framings (Content-Length and
/// chunked), and `Expect: 100-continue` uploads: the bytes must arrive intact and the flow must
/// count all of them.
final class LargeBodyTests: XCTestCase {
    static let uploadSize = 5 * 1024 * 1024
    static let downloadSize = 50 * 1024 * 1024

    /// A 5 MB upload arrives at the origin complete and unchanged.
    func testUploadOf5MBArrivesIntact() async throws {
        try await Fixture.run { proxy, origin in
            let file = proxy.file("upload.bin")
            try PatternBytes.writeFile(file, count: Self.uploadSize)
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), [
                "-H", "Expect:", "-H", "Content-Type: application/octet-stream", "--data-binary", "@\(file.path)",
            ], timeout: 30)
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            let expected = Checksum.ofPattern(count: Self.uploadSize)
            let received = origin.log.requests.first
            XCTAssertEqual(received?.bodyLength, Self.uploadSize)
            XCTAssertEqual(received?.bodyChecksum, expected)
            XCTAssertEqual(fetched.header("X-Echo-Body-Checksum"), expected.hex)
            let flow = try proxy.flushedFlows().first
            XCTAssertEqual(flow?.requestBody.size, Int64(Self.uploadSize))
        }
    }

    /// A 50 MB download arrives complete and unchanged; the flow counts every byte even though
    /// it keeps only the capture cap, and keeps those bytes in a body file beside the database
    /// (`BodyFileStore`), read back as they crossed the proxy.
    func testDownloadOf50MBArrivesIntact() async throws {
        try await Fixture.run { proxy, origin in
            let file = proxy.file("download.bin")
            let result = try await Curl.viaProxy(
                proxy.port, ["-o", file.path, "-w", "%{http_code}", origin.url("/bytes/\(Self.downloadSize)")],
                timeout: 40)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stdoutText, "200")
            XCTAssertNil(try PatternBytes.firstMismatch(inFile: file, expectedCount: Self.downloadSize),
                         "the downloaded body differs from what the origin sent")
            let flow = try proxy.flushedFlows().first
            XCTAssertEqual(flow?.responseBody.size, Int64(Self.downloadSize))
            XCTAssertEqual(flow?.responseBody.bytes.count, proxy.configuration.maxCapturedBodyBytes)
            XCTAssertTrue(flow?.responseBody.bytes == PatternBytes.data(count: proxy.configuration.maxCapturedBodyBytes),
                          "the captured prefix differs from what the origin sent")
            XCTAssertEqual(flow?.responseBody.truncated, true)
            // Spooled while it crossed the proxy, then moved to its content name.
            let store = proxy.repository.database.bodyFiles.directory
            let shards = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0 != "spool" }
            XCTAssertEqual(shards.count, 1, "one body file")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store + "/spool"), [], "no spool file left")
        }
    }

    /// A chunked request body (no Content-Length) is relayed chunked and arrives intact.
    func testChunkedRequestBodyArrivesIntact() async throws {
        try await Fixture.run { proxy, origin in
            let size = 300_000
            let file = proxy.file("chunked-upload.bin")
            try PatternBytes.writeFile(file, count: size)
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), [
                "-H", "Expect:", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(file.path)",
            ])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            let received = origin.log.requests.first
            XCTAssertEqual(received?.values(of: "Transfer-Encoding").map { $0.lowercased() }, ["chunked"])
            XCTAssertEqual(received?.values(of: "Content-Length"), [])
            XCTAssertEqual(received?.bodyLength, size)
            XCTAssertEqual(received?.bodyChecksum, Checksum.ofPattern(count: size))
            XCTAssertEqual(try proxy.flushedFlows().first?.requestBody.size, Int64(size))
        }
    }

    /// A chunked response is relayed chunked to an HTTP/1.1 client and arrives intact.
    func testChunkedResponseArrivesIntact() async throws {
        try await Fixture.run { proxy, origin in
            let size = 1_000_000
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/chunked/\(size)"))
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.header("Transfer-Encoding")?.lowercased(), "chunked")
            XCTAssertNil(fetched.header("Content-Length"))
            XCTAssertEqual(fetched.body.count, size)
            XCTAssertTrue(fetched.body == PatternBytes.data(count: size), "the chunked body differs")
            XCTAssertEqual(try proxy.flushedFlows().first?.responseBody.size, Int64(size))
        }
    }

    /// An HTTP/1.0 client cannot read chunked framing: it gets the body delimited by the
    /// connection closing, and no `Transfer-Encoding`.
    func testChunkedResponseToHTTP10ClientIsDelimitedByClose() async throws {
        try await Fixture.run { proxy, origin in
            let size = 100_000
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/chunked/\(size)")) HTTP/1.0\r\n\r\n")
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the proxy must close to end the body")
            guard let (response, _) = try RawResponse.parse(client.pending, atEOF: true) else {
                return XCTFail("no response")
            }
            XCTAssertEqual(response.status, 200)
            XCTAssertNil(response.header("Transfer-Encoding"))
            XCTAssertEqual(response.body.count, size)
            XCTAssertTrue(response.body == PatternBytes.data(count: size))
        }
    }

    /// curl sends `Expect: 100-continue` and waits for the origin's `100 Continue`, relayed by
    /// the proxy, before sending 5 MB; the upload arrives intact and the flow has its full size.
    func testExpectContinueUploadWithCurl() async throws {
        try await Fixture.run { proxy, origin in
            let file = proxy.file("expect-upload.bin")
            try PatternBytes.writeFile(file, count: Self.uploadSize)
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/expect"), [
                "-H", "Expect: 100-continue", "--expect100-timeout", "15", "--data-binary", "@\(file.path)",
            ], timeout: 30)
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.statuses, [100, 200], "curl must see the origin's 100 Continue, then 200")
            let received = origin.log.requests.first
            XCTAssertEqual(received?.values(of: "Expect"), ["100-continue"])
            XCTAssertEqual(received?.bodyLength, Self.uploadSize)
            XCTAssertEqual(received?.bodyChecksum, Checksum.ofPattern(count: Self.uploadSize))
            let flow = try proxy.flushedFlows().first
            XCTAssertEqual(flow?.status, 200)
            XCTAssertEqual(flow?.requestBody.size, Int64(Self.uploadSize))
        }
    }

    /// A client that sends no body until it sees `100 Continue` gets it from the origin through
    /// the proxy, and then the final response.
    func testExpectContinueIsRelayedBeforeTheBodyIsSent() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("POST \(origin.url("/expect")) HTTP/1.1\r\nHost: \(origin.authority)\r\n"
                            + "Expect: 100-continue\r\nContent-Length: 11\r\n\r\n")
            let informational = try client.readResponse()
            XCTAssertEqual(informational.status, 100)
            try client.send("hello world")
            let final = try client.readResponse()
            XCTAssertEqual(final.status, 200)
            XCTAssertEqual(final.bodyText, "hello world")
        }
    }
}
