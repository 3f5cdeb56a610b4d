import Foundation
import ProxyModel
import XCTest

/// The stored flow of an HTTP exchange, read back from the SQLite capture: every field the
/// engine fills in, the timing phases (-1 where a phase did not happen) and the body cap.
final class CaptureTests: XCTestCase {
    /// Every field of a POST as stored: client address, request line, headers in order with
    /// duplicates, bodies, status and reason, response headers as the origin sent them.
    func testFlowRecordsEveryFieldOfAnExchange() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            let sentHeaders = [
                HeaderField(name: "Host", value: origin.authority),
                HeaderField(name: "X-Dup", value: "first"),
                HeaderField(name: "User-Agent", value: "raw-client/1"),
                HeaderField(name: "X-Dup", value: "second"),
                HeaderField(name: "Content-Type", value: "text/plain"),
                HeaderField(name: "Content-Length", value: "11"),
            ]
            let head = sentHeaders.map { "\($0.name): \($0.value)\r\n" }.joined()
            let before = Date()
            try client.send("POST \(origin.url("/echo?q=1&r=2")) HTTP/1.1\r\n\(head)\r\nhello world")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)

            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.count, 1)
            guard let flow = flows.first else { return }
            XCTAssertNotNil(flow.id)
            XCTAssertEqual(flow.kind, .http)
            XCTAssertEqual(flow.clientAddress, "127.0.0.1:\(client.localPort)")
            XCTAssertEqual(flow.method, "POST")
            XCTAssertEqual(flow.scheme, "http")
            XCTAssertEqual(flow.host, "127.0.0.1")
            XCTAssertEqual(flow.port, origin.port)
            XCTAssertEqual(flow.path, "/echo?q=1&r=2")
            XCTAssertEqual(flow.httpVersion, "HTTP/1.1")
            XCTAssertEqual(flow.requestHeaders, sentHeaders)
            XCTAssertEqual(flow.requestBody, CapturedBody(bytes: Data("hello world".utf8), size: 11, truncated: false))
            XCTAssertEqual(flow.status, 200)
            XCTAssertEqual(flow.reason, "OK")
            XCTAssertEqual(flow.responseHeaders, response.headers, "no hop-by-hop header here: both must be equal")
            XCTAssertEqual(flow.responseHeaders.first(named: "X-Echo-Body-Length"), "11")
            XCTAssertEqual(flow.responseBody, CapturedBody(bytes: Data("hello world".utf8), size: 11, truncated: false))
            XCTAssertNil(flow.error)
            XCTAssertFalse(flow.marked)
            XCTAssertEqual(flow.serverAddress, "127.0.0.1", "the origin's address as connected")
            // Stored with millisecond precision.
            XCTAssertGreaterThanOrEqual(flow.startedAt.timeIntervalSince1970, before.timeIntervalSince1970 - 0.001)
            guard let finishedAt = flow.finishedAt else { return XCTFail("finishedAt missing") }
            XCTAssertGreaterThanOrEqual(finishedAt, flow.startedAt)
        }
    }

    /// A fresh upstream connection to an IP literal has a connect phase but no DNS phase; a
    /// reused one has neither. Plain HTTP has no TLS phase. Send, wait and receive always happen.
    func testTimingPhasesForFreshAndReusedConnections() async throws {
        try await Fixture.run { proxy, origin in
            let client = try RawClient(port: proxy.port)
            for size in [10, 20] {
                try client.send("GET \(origin.url("/bytes/\(size)")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
                XCTAssertEqual(try client.readResponse().status, 200)
            }
            XCTAssertEqual(origin.log.acceptedConnections, 1)
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.count, 2)
            guard let fresh = flows.first, let reused = flows.last else { return }
            XCTAssertEqual(fresh.timings.dns, FlowTimings.notApplicable, "an IP literal needs no lookup")
            XCTAssertGreaterThanOrEqual(fresh.timings.connect, 0)
            XCTAssertEqual(reused.timings.dns, FlowTimings.notApplicable)
            XCTAssertEqual(reused.timings.connect, FlowTimings.notApplicable)
            XCTAssertEqual(reused.serverAddress, "127.0.0.1", "a pooled connection still knows its origin")
            for flow in flows {
                XCTAssertEqual(flow.timings.tls, FlowTimings.notApplicable)
                XCTAssertGreaterThanOrEqual(flow.timings.send, 0)
                XCTAssertGreaterThanOrEqual(flow.timings.wait, 0)
                XCTAssertGreaterThanOrEqual(flow.timings.receive, 0)
            }
        }
    }

    /// A host name (`*.localhost`, resolved locally to loopback) has a DNS phase, and the flow
    /// keeps the name, not the address.
    func testHostNameHasDNSPhase() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, "http://e2e.localhost:\(origin.port)/bytes/8")
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            XCTAssertEqual(origin.log.requests.first?.values(of: "Host"), ["e2e.localhost:\(origin.port)"])
            let flow = try await proxy.waitForFlows(count: 1).first
            XCTAssertEqual(flow?.host, "e2e.localhost")
            XCTAssertGreaterThanOrEqual(flow?.timings.dns ?? -1, 0)
            XCTAssertGreaterThanOrEqual(flow?.timings.connect ?? -1, 0)
        }
    }

    /// Bodies larger than the capture cap: the first `cap` bytes are kept, the full size is
    /// counted and the flow says it is truncated; the client still gets every byte.
    func testBodiesOverCapAreTruncatedButCounted() async throws {
        try await Fixture.run({ $0.maxCapturedBodyBytes = 1024 }) { proxy, origin in
            let size = 100 * 1024
            let download = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/\(size)"))
            XCTAssertEqual(download.body, PatternBytes.data(count: size), "the cap must not touch the relayed body")

            let file = proxy.file("upload.bin")
            try PatternBytes.writeFile(file, count: size)
            let upload = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"),
                                              ["-H", "Expect:", "--data-binary", "@\(file.path)"])
            XCTAssertEqual(upload.status, 200, upload.result.summary)
            XCTAssertEqual(origin.log.requests.last?.bodyLength, size)

            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.count, 2)
            let response = flows.first?.responseBody
            XCTAssertEqual(response?.bytes, PatternBytes.data(count: 1024))
            XCTAssertEqual(response?.size, Int64(size))
            XCTAssertEqual(response?.truncated, true)
            let request = flows.last?.requestBody
            XCTAssertEqual(request?.bytes, PatternBytes.data(count: 1024))
            XCTAssertEqual(request?.size, Int64(size))
            XCTAssertEqual(request?.truncated, true)
        }
    }

    /// A body of exactly the cap is kept whole and not marked truncated.
    func testBodyOfExactlyCapIsNotTruncated() async throws {
        try await Fixture.run({ $0.maxCapturedBodyBytes = 1024 }) { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/1024"))
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            let body = try await proxy.waitForFlows(count: 1).first?.responseBody
            XCTAssertEqual(body, CapturedBody(bytes: PatternBytes.data(count: 1024), size: 1024, truncated: false))
        }
    }

    /// A chunked response is stored de-chunked (the body bytes, not the framing).
    func testChunkedResponseBodyIsStoredWithoutFraming() async throws {
        try await Fixture.run { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/chunked/40000"))
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            let body = try await proxy.waitForFlows(count: 1).first?.responseBody
            XCTAssertEqual(body?.bytes, PatternBytes.data(count: 40000))
            XCTAssertEqual(body?.size, 40000)
        }
    }
}
