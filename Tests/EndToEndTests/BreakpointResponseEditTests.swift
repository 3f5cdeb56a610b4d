import FlowFilter
import Foundation
import NIOCore
import ProxyEngine
import ProxyModel
import XCTest

/// A response held at a breakpoint and edited before the client gets it: status, headers and body
/// as written, framing decided again (so the client's connection stays usable), the origin's
/// response kept on the flow; edits that do not fit the hold are refused and leave it held.
final class BreakpointResponseEditTests: XCTestCase {
    func testAHeldResponseReachesTheClientAsEdited() async throws {
        try await withBreakpoints(filter: "~s & ~u /bytes") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/100")) }
            let holds = try await waitForHolds(proxy, count: 1)
            XCTAssertNil(proxy.breakpoints.heldRequest(holds[0].id), "a held response has no request to edit")
            let response = try XCTUnwrap(proxy.breakpoints.heldResponse(holds[0].id))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.body, [UInt8](PatternBytes.data(count: 100)))

            var edited = response
            edited.status = 201
            edited.reason = "Made Here"
            edited.headers.append(HeaderField(name: "X-Edited", value: "yes"))
            edited.headers.append(HeaderField(name: "Transfer-Encoding", value: "chunked"))  // framing is the proxy's
            edited.body = Array("an edited body".utf8)
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .editResponse(edited)))
            let fetched = try await client.value
            XCTAssertEqual(fetched.status, 201)
            XCTAssertEqual(fetched.bodyText, "an edited body")
            XCTAssertEqual(fetched.header("X-Edited"), "yes")
            XCTAssertEqual(fetched.header("Content-Length"), "14")
            XCTAssertNil(fetched.header("Transfer-Encoding"))

            let flows = try await proxy.waitForFlows(count: 1)
            let flow = try XCTUnwrap(flows.first)
            XCTAssertEqual(flow.status, 201, "the flow keeps the response as the client got it")
            XCTAssertEqual(flow.reason, "Made Here", "the reason as written, not NIO's phrase for 201")
            XCTAssertEqual(flow.responseBody.bytes, Data("an edited body".utf8))
            XCTAssertEqual(flow.originResponse?.status, 200, "and the origin's as it came")
            XCTAssertEqual(flow.originResponse?.body?.bytes, PatternBytes.data(count: 100))
            XCTAssertTrue(flow.note?.contains("response held") == true && flow.note?.contains("edited") == true, String(describing: flow.note))
        }
    }

    /// Edits that do not fit are refused and the exchange stays held: a request's edit for a
    /// response, an interim or out-of-range status, a header that would inject a line.
    func testEditsThatDoNotFitLeaveTheResponseHeld() async throws {
        try await withBreakpoints(filter: "~s") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/202")) }
            let holds = try await waitForHolds(proxy, count: 1)
            let id = holds[0].id
            let response = try XCTUnwrap(proxy.breakpoints.heldResponse(id))
            XCTAssertFalse(proxy.breakpoints.decide(id, .edit(Breakpoints.HeldRequest(method: "GET", url: origin.url("/"),
                                                                                     headers: [], body: []))))
            for status in [100, 101, 199, 600, 0, -1] {
                var bad = response
                bad.status = status
                XCTAssertFalse(proxy.breakpoints.decide(id, .editResponse(bad)), "status \(status)")
                XCTAssertNotNil(Breakpoints.problem(in: bad))
            }
            var injected = response
            injected.headers.append(HeaderField(name: "X-A", value: "1\r\nSet-Cookie: stolen=1"))
            XCTAssertFalse(proxy.breakpoints.decide(id, .editResponse(injected)))
            var badName = response
            badName.headers.append(HeaderField(name: "Bad Name", value: "1"))
            XCTAssertFalse(proxy.breakpoints.decide(id, .editResponse(badName)))
            var badReason = response
            badReason.reason = "OK\r\nX-Injected: 1"
            XCTAssertFalse(proxy.breakpoints.decide(id, .editResponse(badReason)))
            XCTAssertEqual(proxy.breakpoints.held().map(\.id), [id], "still held after every refusal")

            XCTAssertTrue(proxy.breakpoints.decide(id, .accept))
            let fetched = try await client.value
            XCTAssertEqual(fetched.status, 202)
            XCTAssertNil(fetched.header("X-A"))
            XCTAssertNil(fetched.header("Set-Cookie"))
        }
    }

    /// After an edited response the client's keep-alive connection carries the next request: a
    /// response to HEAD stays bodiless (an edited body is not written), a 204 gets no length, and
    /// a `Connection` field the person wrote does not override the exchange's own.
    func testTheClientsConnectionStaysInStepAfterEdits() async throws {
        try await withBreakpoints(filter: "~s & ~u /bytes") { proxy, origin in
            let client = try RawClient(port: proxy.port)
            defer { client.close() }
            try client.send("HEAD \(origin.url("/bytes/100")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            var holds = try await waitForHolds(proxy, count: 1)
            var edited = try XCTUnwrap(proxy.breakpoints.heldResponse(holds[0].id))
            edited.body = Array("not for a HEAD".utf8)
            edited.headers.append(HeaderField(name: "Connection", value: "close"))
            edited.headers.append(HeaderField(name: "X-Head", value: "edited"))
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .editResponse(edited)))
            let head = try client.readResponse(noBody: true)
            XCTAssertEqual(head.header("X-Head"), "edited")
            XCTAssertEqual(head.header("Content-Length"), "100", "the origin's length for HEAD, as it was held")
            XCTAssertNil(head.header("Connection"))

            try client.send("GET \(origin.url("/bytes/10")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            holds = try await waitForHolds(proxy, count: 1)
            edited = try XCTUnwrap(proxy.breakpoints.heldResponse(holds[0].id))
            edited.status = 204
            edited.reason = "No Content"
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .editResponse(edited)))
            let empty = try client.readResponse()
            XCTAssertEqual(empty.status, 204)
            XCTAssertNil(empty.header("Content-Length"))
            XCTAssertEqual(empty.body.count, 0)

            try client.send("GET \(origin.url("/echo/third")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            let third = try client.readResponse()
            XCTAssertEqual(third.status, 200, "the same connection still carries requests")
            XCTAssertEqual(origin.log.requests.count, 3)
        }
    }

    /// A decrypted HTTP/2 client (curl over h2) gets the edited response on its stream: the
    /// length written again, fields a person wrote that HTTP/2 forbids (`Connection`,
    /// `Transfer-Encoding`, `Keep-Alive`) left out, so the stream is not reset.
    func testAnHTTP2ClientGetsTheEditedResponse() async throws {
        let breakpoints = Breakpoints()
        let filter = try FlowFilter(parsing: "~s")
        breakpoints.setFilter("~s") { filter.matches($0) }
        try await InterceptingFixture.run(breakpoints: breakpoints) { fixture in
            let proxy = fixture.proxy
            let client = Task {
                try await Curl.viaProxy(proxy.port, ["--http2", "--cacert", fixture.tls.proxyCAFile.path, "-s", "-i",
                                                     "--suppress-connect-headers", fixture.tlsURL("/bytes/50")])
            }
            let holds = try await waitForHolds(proxy, count: 1)
            var edited = try XCTUnwrap(breakpoints.heldResponse(holds[0].id))
            edited.status = 202
            edited.headers += [HeaderField(name: "Connection", value: "keep-alive, X-Gone"),
                               HeaderField(name: "Keep-Alive", value: "timeout=5"), HeaderField(name: "X-Gone", value: "1"),
                               HeaderField(name: "X-Edited", value: "over h2")]
            edited.body = Array("edited on a stream".utf8)
            XCTAssertTrue(breakpoints.decide(holds[0].id, .editResponse(edited)))
            let result = try await client.value
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let text = result.stdoutText.lowercased()
            XCTAssertTrue(text.hasPrefix("http/2 202"), text)
            XCTAssertTrue(text.contains("x-edited: over h2"), text)
            XCTAssertTrue(text.contains("content-length: 18"), text)
            XCTAssertFalse(text.contains("keep-alive") || text.contains("x-gone"), text)
            XCTAssertTrue(text.hasSuffix("\r\n\r\nedited on a stream"), text)
        }
    }
}
