import CaptureStore
import FlowExport
import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// A tunnel whose TLS handshake failed is a failed exchange everywhere (issue 14 §5): curl that
/// does not trust the proxy's CA leaves a flow with its error and no status (not the CONNECT's
/// 200), matched by `~e` and never by `~c 200` or `~s`, exported to HAR with status 0 and `_error`.
final class FailedTunnelTests: XCTestCase {
    func testUntrustingClientLeavesAFailedFlowEverywhere() async throws {
        try await InterceptingFixture.run { fixture in
            let rejected = try await Curl.viaProxy(fixture.proxy.port, ["-o", "/dev/null", fixture.tlsURL("/echo")])
            XCTAssertNotEqual(rejected.exitCode, 0, "curl must refuse the proxy's certificate")
            let flows = try await fixture.proxy.waitForFlows(count: 1)
            let flow = try XCTUnwrap(flows.last)
            XCTAssertEqual(flow.kind, .tunnel)
            XCTAssertTrue(flow.error?.hasPrefix("TLS handshake with the client failed: ") ?? false, "\(String(describing: flow.error))")
            XCTAssertNil(flow.status, "the CONNECT's 200 is no outcome of a failed tunnel")
            XCTAssertNil(flow.reason)

            let repository = fixture.proxy.repository
            func count(_ expression: String) throws -> Int {
                try repository.count(matching: FlowQuery(filter: try FlowFilter(parsing: expression)))
            }
            XCTAssertEqual(try count("~e"), 1)
            XCTAssertEqual(try count("~c 200"), 0)
            XCTAssertEqual(try count("~s"), 0)
            XCTAssertEqual(try count("!~c 200 & ~tcp"), 1)

            let file = fixture.proxy.directory.appendingPathComponent("failed.har")
            let output = try FileOutput(creatingFileAt: file.path)
            let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "e2e"),
                                       pageStarted: flow.startedAt, pageTitle: "failed tunnel", redaction: false)
            try repository.forEachFlow(matching: FlowQuery()) { try writer.write($0) }
            try writer.finish()
            try output.close()
            let har = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            let entry = try XCTUnwrap(((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
            XCTAssertEqual((entry["response"] as? [String: Any])?["status"] as? Int, 0)
            XCTAssertEqual(entry["_error"] as? String, flow.error)
        }
    }
}
