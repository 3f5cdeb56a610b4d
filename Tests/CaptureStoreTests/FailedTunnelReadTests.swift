import CaptureTestSupport
import FlowFilter
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

/// Captures made before failed tunnels were stored without a status hold them with their
/// CONNECT's 200: they read as failed exchanges (no status), and `~c`/`~s` in SQL agree with
/// Swift, so no migration is needed. Other flows keep their status, errors or not.
final class FailedTunnelReadTests: XCTestCase {
    func testOldFailedTunnelReadsWithoutStatus() throws {
        let repository = try makeRepository()
        let oldFailed = Flow(kind: .tunnel, method: "CONNECT", host: "failed.test", port: 443, status: 200,
                             reason: "Connection established", error: "TLS handshake with the client failed: the client sent unknown_ca")
        let relayed = Flow(kind: .tunnel, method: "CONNECT", host: "relayed.test", port: 443, status: 200)
        let cutShort = Flow(method: "GET", host: "cut.test", status: 200, error: "the origin closed the connection mid-body")
        try repository.insert([oldFailed, relayed, cutShort])

        var stored: [String: Flow] = [:]
        try repository.forEachFlow(matching: FlowQuery()) { stored[$0.host] = $0 }
        XCTAssertNil(stored["failed.test"]?.status)
        XCTAssertEqual(stored["failed.test"]?.error, oldFailed.error)
        XCTAssertEqual(stored["relayed.test"]?.status, 200)
        XCTAssertEqual(stored["cut.test"]?.status, 200)

        let expectations = ["~c 200": ["cut.test", "relayed.test"], "~s": ["cut.test", "relayed.test"],
                            "~e": ["cut.test", "failed.test"], "!~c 200": ["failed.test"], "!~s": ["failed.test"]]
        for (expression, hosts) in expectations {
            let filter = try FlowFilter(parsing: expression)
            var selected: [String] = []
            try repository.forEachFlow(matching: FlowQuery(filter: filter)) { selected.append($0.host) }
            XCTAssertEqual(selected.sorted(), hosts, expression)
            XCTAssertEqual(stored.values.filter(filter.matches).map(\.host).sorted(), hosts, "Swift agrees: \(expression)")
            XCTAssertEqual(try repository.count(matching: FlowQuery(filter: filter)), hosts.count, expression)
        }
    }
}
