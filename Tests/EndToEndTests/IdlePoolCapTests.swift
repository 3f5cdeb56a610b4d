import Foundation
import Rules
import RulesFile
import XCTest

/// The idle upstream pool as a whole is capped: requests to many distinct origins (each name its
/// own pool key) leave at most the cap of idle connections open, the oldest closed first. Before
/// the cap, 2,500 names left 1,988 idle connections and the proxy ran out of descriptors.
final class IdlePoolCapTests: XCTestCase {
    func testManyOriginsLeaveAtMostTheCapOpen() async throws {
        let rules = LiveRules(try RulesFile.parse("""
            rules:
              - name: every name here
                match: { host: "*.pool.test" }
                dns: { to: 127.0.0.1 }
            """, file: "rules.yml", baseDirectory: "/"))
        // Two event loops in the harness: two idle connections each.
        try await Fixture.run(rules: rules, { $0.maxIdleUpstreamConnections = 4 }) { proxy, origin in
            for index in 0..<16 {
                let response = try await Curl.fetch(viaProxy: proxy.port, "http://o\(index).pool.test:\(origin.port)/status/200")
                XCTAssertEqual(response.status, 200, response.result.summary)
            }
            XCTAssertEqual(origin.log.acceptedConnections, 16, "each name gets its own upstream connection")
            var open = 16
            for _ in 0..<500 {
                open = origin.log.acceptedConnections - origin.log.closedConnections
                if open <= 4 { break }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            XCTAssertEqual(open, 4, "the pool keeps its cap, no more and (within the idle timeout) no fewer")
            // The newest names are the ones kept: asking for the last one again on the same loop
            // needs no new connection. Which loop serves curl is not ours to pick, so ask twice
            // (one lands on each loop).
            for _ in 0..<2 {
                _ = try await Curl.fetch(viaProxy: proxy.port, "http://o15.pool.test:\(origin.port)/status/200")
            }
            XCTAssertLessThanOrEqual(origin.log.acceptedConnections, 17)
        }
    }
}
