import ProxyModel
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// Flows cut short by the proxy's own shutdown say so, with what the exchange saw in the note.
final class ShutdownAwareSinkTests: XCTestCase {
    private func flow(error: String?, note: String? = nil) -> Flow {
        var flow = Flow(kind: .http, clientAddress: "127.0.0.1:1", startedAt: Date(), method: "GET", scheme: "http",
                        host: "a.test", port: 80, path: "/", httpVersion: "HTTP/1.1", requestHeaders: [])
        flow.error = error
        flow.note = note
        return flow
    }

    func testErrorsAfterStopSayTheProxyStopped() {
        let collected = CollectingSink()
        let sink = ShutdownAwareSink(collected)
        sink.record(flow(error: "client closed the connection before the exchange completed"))
        sink.stop()
        sink.record(flow(error: "ORIGIN closed the connection before a complete response", note: "rule x"))
        sink.record(flow(error: nil))
        XCTAssertEqual(collected.flows.map(\.error), [
            "client closed the connection before the exchange completed", ShutdownAwareSink.reason, nil,
        ])
        XCTAssertEqual(collected.flows[1].note,
                       "rule x; as the exchange saw it: ORIGIN closed the connection before a complete response")
        XCTAssertNil(collected.flows[2].note)
    }
}
