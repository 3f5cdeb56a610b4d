@testable import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Our phases become HAR's: connect includes ssl, -1 where a phase did not happen, time is the sum.
final class HARTimingsTests: XCTestCase {
    func testConnectIncludesSSLAndRequiredPhasesAreNeverNegative() {
        let flow = Flow(timings: FlowTimings(dns: -1, connect: 2, tls: 3, send: -1, wait: 4, receive: -1))
        let timings = HARTimings(flow)
        XCTAssertEqual(timings.connect, 5000)
        XCTAssertEqual(timings.ssl, 3000)
        XCTAssertEqual(timings.dns, -1)
        XCTAssertEqual(timings.blocked, -1)
        XCTAssertEqual([timings.send, timings.receive], [0, 0])
        XCTAssertEqual(timings.total, 9000)
    }

    func testReusedConnectionHasNoConnectPhase() {
        let timings = HARTimings(Flow(timings: FlowTimings(send: 0.0004, wait: 1.2345, receive: 0.5)))
        XCTAssertEqual([timings.dns, timings.connect, timings.ssl], [-1, -1, -1])
        XCTAssertEqual(timings.send, 0, "rounded to whole microseconds")
        XCTAssertEqual(timings.wait, 1235)
        XCTAssertEqual(timings.total, 1735)
    }

    func testNotFiniteValuesAreNotApplicable() {
        let timings = HARTimings(Flow(timings: FlowTimings(dns: .nan, connect: .infinity, wait: 2)))
        XCTAssertEqual([timings.dns, timings.connect], [-1, -1])
        XCTAssertEqual(timings.total, 2000)
    }

    func testDurationFillsWaitOnlyWhenNothingWasMeasured() {
        let start = Date(timeIntervalSince1970: 1000)
        let unmeasured = Flow(startedAt: start, finishedAt: start.addingTimeInterval(0.25))
        XCTAssertEqual(HARTimings(unmeasured).wait, 250_000)
        var measured = unmeasured
        measured.timings.wait = 10
        XCTAssertEqual(HARTimings(measured).wait, 10_000)
        XCTAssertEqual(HARTimings(measured).total, 10_000, "time is the sum, not the duration")
        XCTAssertEqual(HARTimings(Flow(startedAt: start)).total, 0, "unfinished: nothing to show")
    }

    /// A request held and then killed measured no network phase: its duration less the hold is
    /// `wait`, the hold `blocked`, so `time` is the duration, not the hold counted twice.
    func testAHeldFlowWithoutNetworkPhasesCountsItsHoldOnce() {
        let start = Date(timeIntervalSince1970: 1000)
        var flow = Flow(startedAt: start, finishedAt: start.addingTimeInterval(30.5))
        flow.timings.hold = 30_000
        let timings = HARTimings(flow)
        XCTAssertEqual(timings.blocked, 30_000_000)
        XCTAssertEqual(timings.wait, 500_000)
        XCTAssertEqual(timings.total, 30_500_000)
    }
}
