import FlowFilter
import Foundation
import NIOCore
import ProxyEngine
import ProxyModel
import XCTest

/// Breakpoints with real clients waiting: a request held before it leaves and a response held
/// before the client sees it, then accepted, killed or timed out; the origin sees a held request
/// only once it is accepted; other exchanges go on meanwhile; flows note the hold.
final class BreakpointTests: XCTestCase {
    func testAHeldRequestLeavesOnlyWhenAccepted() async throws {
        try await withBreakpoints(filter: "~q & ~u /echo") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "held body"]) }
            let holds = try await waitForHolds(proxy, count: 1)
            XCTAssertEqual(holds.first?.side, .request)
            XCTAssertEqual(holds.first?.method, "POST")
            XCTAssertEqual(holds.first?.url, origin.url("/echo"))
            XCTAssertEqual(origin.log.requests.count, 0, "the origin sees nothing while the request is held")

            // Another exchange goes on meanwhile.
            let other = try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/204"))
            XCTAssertEqual(other.status, 204)

            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .accept))
            let fetched = try await client.value
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.bodyText, "held body")
            XCTAssertEqual(proxy.breakpoints.held(), [])
            let flows = try await proxy.waitForFlows(count: 2)
            let note = flows.first { $0.path == "/echo" }?.note ?? ""
            XCTAssertTrue(note.hasPrefix("breakpoint: request held ") && note.hasSuffix(" s, accepted"), note)
        }
    }

    /// A held request goes on as edited: method, path, headers and body as written, framed again;
    /// the flow keeps the client's request and the one forwarded. An edit may not change the host.
    func testAHeldRequestGoesOnAsEdited() async throws {
        try await withBreakpoints(filter: "~q") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo?was=1"), ["--data-binary", "original"]) }
            let holds = try await waitForHolds(proxy, count: 1)
            let request = try XCTUnwrap(proxy.breakpoints.heldRequest(holds[0].id))
            XCTAssertEqual(request.method, "POST")
            XCTAssertEqual(request.url, origin.url("/echo?was=1"))
            XCTAssertEqual(request.body, Array("original".utf8))
            var elsewhere = request
            elsewhere.url = "http://127.0.0.2:\(origin.port)/echo"
            XCTAssertFalse(proxy.breakpoints.decide(holds[0].id, .edit(elsewhere)), "the host cannot change")
            for target in ["?x=1", "#f", "/a#f", "@evil.test/"] {
                var odd = request
                odd.url = "http://127.0.0.1:\(origin.port)" + target
                XCTAssertFalse(proxy.breakpoints.decide(holds[0].id, .edit(odd)), "a request target \(target) is not a path")
            }
            XCTAssertEqual(proxy.breakpoints.held().count, 1, "still held")

            var edited = request
            edited.method = "PUT"
            edited.url = origin.url("/echo/edited?now=2")
            edited.headers.append(HeaderField(name: "X-Edited", value: "yes"))
            edited.body = Array("a longer edited body".utf8)
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .edit(edited)))
            let fetched = try await client.value
            XCTAssertEqual(fetched.bodyText, "a longer edited body")
            let received = try XCTUnwrap(origin.log.requests.last)
            XCTAssertEqual(received.method, "PUT")
            XCTAssertEqual(received.uri, "/echo/edited?now=2")
            XCTAssertEqual(received.headers.first(named: "x-edited"), "yes")
            XCTAssertEqual(received.headers.first(named: "content-length"), "20")
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.method, "POST", "the flow keeps the client's request")
            XCTAssertEqual(flows.first?.forwardedRequest?.method, "PUT")
            XCTAssertTrue(flows.first?.note?.contains("breakpoint: request held") == true && flows.first?.note?.contains("edited") == true,
                          String(describing: flows.first?.note))
        }
    }

    /// Both sides held: the flow's timings show the holds as one phase, and the network phases
    /// leave them out (so all phases still add up to the exchange's duration, not more).
    func testTheHoldIsATimingPhaseOfItsOwn() async throws {
        try await withBreakpoints(filter: "~u /echo") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "timed"]) }
            var holds = try await waitForHolds(proxy, count: 1)
            try await Task.sleep(nanoseconds: 300_000_000)
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .accept))
            for _ in 0..<500 where proxy.breakpoints.held().first?.side != .response { try await Task.sleep(nanoseconds: 10_000_000) }
            holds = try await waitForHolds(proxy, count: 1)
            XCTAssertEqual(holds.first?.side, .response)
            try await Task.sleep(nanoseconds: 300_000_000)
            XCTAssertTrue(proxy.breakpoints.decide(holds[0].id, .accept))
            _ = try await client.value
            let flows = try await proxy.waitForFlows(count: 1)
            let flow = try XCTUnwrap(flows.first)
            let timings = flow.timings
            XCTAssertGreaterThanOrEqual(timings.hold, 600)
            let network = [timings.dns, timings.connect, timings.tls, timings.send, timings.wait, timings.receive].map { max($0, 0) }
            let duration = try XCTUnwrap(flow.durationMilliseconds)
            XCTAssertLessThanOrEqual(network.reduce(0, +) + timings.hold, duration + 50,
                                     "phases \(timings) add up to more than the duration \(duration) ms: the hold is counted twice")
        }
    }

    func testAKilledRequestIsAnswered502AndNeverSent() async throws {
        try await withBreakpoints(filter: "~q") { proxy, origin in
            let client = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo")) }
            let holds = try await waitForHolds(proxy, count: 1)
            proxy.breakpoints.decide(holds[0].id, .kill)
            let fetched = try await client.value
            XCTAssertEqual(fetched.status, 502)
            XCTAssertTrue(fetched.header("Proxy-Status")?.contains("http_request_denied") == true,
                          String(describing: fetched.header("Proxy-Status")))
            XCTAssertEqual(origin.log.requests.count, 0)
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.error, "the request was aborted at a breakpoint")
        }
    }

    func testAHeldResponseReachesTheClientWhenAcceptedOrIsResetWhenKilled() async throws {
        try await withBreakpoints(filter: "~s & ~c 200") { proxy, origin in
            let accepted = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/5000")) }
            var holds = try await waitForHolds(proxy, count: 1)
            XCTAssertEqual(holds.first?.side, .response)
            XCTAssertEqual(holds.first?.status, 200)
            XCTAssertEqual(origin.log.requests.count, 1, "the origin answered; the client waits")
            proxy.breakpoints.decide(holds[0].id, .accept)
            let fetched = try await accepted.value
            XCTAssertEqual(fetched.body, PatternBytes.data(count: 5_000))

            let killed = Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/bytes/100")) }
            holds = try await waitForHolds(proxy, count: 1)
            proxy.breakpoints.decide(holds[0].id, .kill)
            let reset = try await killed.value
            XCTAssertNotEqual(reset.result.exitCode, 0, "the client's connection is reset, no answer")
            XCTAssertNil(reset.status)
            let flows = try await proxy.waitForFlows(count: 2)
            XCTAssertEqual(flows.last?.error, "the response was aborted at a breakpoint")
        }
    }

    func testANobodyDecidesTheExchangeGoesOnUnchangedAfterTheTimeout() async throws {
        try await withBreakpoints(timeout: .milliseconds(300), filter: "~u /echo") { proxy, origin in
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "late"])
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.bodyText, "late")
            let flows = try await proxy.waitForFlows(count: 1)
            let note = flows.first?.note ?? ""
            XCTAssertTrue(note.contains("breakpoint: request held") && note.contains("released unchanged"), note)
            XCTAssertTrue(note.contains("breakpoint: response held"), "both sides matched and both were held: \(note)")
        }
    }

    func testAClientLeavingWhileHeldEndsTheHold() async throws {
        try await withBreakpoints(filter: "~q") { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("GET \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\n\r\n")
            _ = try await waitForHolds(proxy, count: 1)
            client.abort()
            try await waitUntilNothingHeld(proxy)
            XCTAssertEqual(proxy.breakpoints.held(), [], "a hold whose client left is no longer listed")
            XCTAssertEqual(origin.log.requests.count, 0)
        }
    }

    /// A client that closes its side (a timed-out curl) while its request is held is gone: the
    /// hold ends, nothing is sent, its connection closes.
    func testAClientClosingItsSideWhileHeldEndsTheHold() async throws {
        try await withBreakpoints(filter: "~q") { proxy, origin in
            let client = try RawClient(port: proxy.port)
            try client.send("POST \(origin.url("/echo")) HTTP/1.1\r\nHost: \(origin.authority)\r\nContent-Length: 2\r\n\r\nhi")
            _ = try await waitForHolds(proxy, count: 1)
            client.shutdownWrite()
            try await waitUntilNothingHeld(proxy)
            XCTAssertEqual(proxy.breakpoints.held(), [])
            XCTAssertTrue(try client.readUntilClose(timeout: 10), "the proxy closes its side too")
            XCTAssertEqual(origin.log.requests.count, 0)
            let flows = try await proxy.waitForFlows(count: 1)
            XCTAssertEqual(flows.first?.error, "the client closed its connection while the exchange was held at a breakpoint")
            XCTAssertGreaterThanOrEqual(flows.first?.timings.hold ?? -1, 0, "the hold the client ended still shows")
        }
    }

    func testAcceptAllReleasesEveryHold() async throws {
        try await withBreakpoints(filter: "~q") { proxy, origin in
            let clients = (0..<3).map { index in
                Task { try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/20\(index)")) }
            }
            _ = try await waitForHolds(proxy, count: 3)
            XCTAssertEqual(proxy.breakpoints.acceptAll(), 3)
            var statuses: [Int?] = []
            for client in clients { statuses.append(try await client.value.status) }
            XCTAssertEqual(statuses, [200, 201, 202])
            proxy.breakpoints.setFilter(nil, matches: nil)
            let unheld = try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/203"))
            XCTAssertEqual(unheld.status, 203, "a cleared filter holds nothing")
        }
    }
}
