import FlowFilter
import Foundation
import NIOCore
import ProxyEngine
import XCTest

/// A proxy whose breakpoints hold what `filter` matches, and a bounded wait for holds.
extension XCTestCase {
    func withBreakpoints(timeout: TimeAmount = .minutes(5), filter: String,
                         _ body: (ProxyHarness, TestOrigin) async throws -> Void) async throws {
        let breakpoints = Breakpoints(timeout: timeout)
        let parsed = try FlowFilter(parsing: filter)
        breakpoints.setFilter(filter, matches: { parsed.matches($0) }, forecast: { parsed.verdictBeforeResponse($0) })
        try await Fixture.run(breakpoints: breakpoints, { _ in }, body)
    }

    /// Waits (bounded) until `count` exchanges are held; fails with what is held otherwise.
    func waitForHolds(_ proxy: ProxyHarness, count: Int) async throws -> [Breakpoints.Held] {
        for _ in 0..<1_000 {
            let held = proxy.breakpoints.held()
            if held.count >= count { return held }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTFail("expected \(count) held exchanges, found \(proxy.breakpoints.held())")
        return proxy.breakpoints.held()
    }

    /// Waits (bounded) until nothing is held; the caller asserts what it expects then.
    func waitUntilNothingHeld(_ proxy: ProxyHarness) async throws {
        for _ in 0..<500 where !proxy.breakpoints.held().isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
    }
}
