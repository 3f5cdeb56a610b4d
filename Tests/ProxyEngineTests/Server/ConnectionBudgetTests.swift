import XCTest
@testable import ProxyEngine

/// The descriptor budget: `2 M + M / 4 + 64 ≤ L` by default, explicit limits taken as given
/// (with a warning when they do not fit), the idle pool split between loops.
final class ConnectionBudgetTests: XCTestCase {
    func testDefaultFollowsTheOpenFileLimit() {
        for (limit, connections, idle) in [(1024, 426, 106), (128, 28, 7), (65536, 29098, 7274), (20000, 8860, 2215)] {
            let budget = ConnectionBudget(descriptorLimit: limit, eventLoops: 2)
            XCTAssertEqual(budget.maxConnections, connections, "L = \(limit)")
            XCTAssertEqual(budget.maxIdleUpstream, idle, "L = \(limit)")
            XCTAssertTrue(budget.fitsDescriptorLimit, "L = \(limit)")
            XCTAssertLessThanOrEqual(budget.descriptorsNeeded, limit)
            XCTAssertFalse(budget.isExplicit)
        }
    }

    /// Absurd limits give a usable budget: at least one connection, no overflow.
    func testExtremeLimits() {
        for limit in [0, 1, 63, 64, 65, -5] {
            let budget = ConnectionBudget(descriptorLimit: limit, eventLoops: 2)
            XCTAssertEqual(budget.maxConnections, 1, "L = \(limit)")
            XCTAssertEqual(budget.maxIdleUpstream, 2, "one idle connection per loop at least")
            XCTAssertEqual(budget.maxIdleUpstreamPerLoop, 1)
        }
        let unlimited = ConnectionBudget(descriptorLimit: .max, eventLoops: 4)
        XCTAssertEqual(unlimited.maxConnections, ((1 << 30) - 64) * 4 / 9)
        XCTAssertTrue(unlimited.fitsDescriptorLimit)
        let huge = ConnectionBudget(descriptorLimit: 1024, maxConnections: .max, maxIdleUpstream: .max, eventLoops: 1)
        XCTAssertFalse(huge.fitsDescriptorLimit)
        XCTAssertGreaterThan(huge.descriptorsNeeded, 1024)
    }

    /// An explicit limit is kept even when it cannot fit, and the banner says what happens then.
    func testExplicitLimitAndItsWarning() {
        let fits = ConnectionBudget(descriptorLimit: 128, maxConnections: 10, eventLoops: 2)
        XCTAssertEqual(fits.maxConnections, 10)
        XCTAssertEqual(fits.maxIdleUpstream, 2)
        XCTAssertTrue(fits.isExplicit)
        XCTAssertEqual(fits.bannerLines, "Connections: at most 10 clients at once, more get 503 (--max-connections)\n")

        let tooMany = ConnectionBudget(descriptorLimit: 128, maxConnections: 1000, eventLoops: 2)
        XCTAssertEqual(tooMany.maxConnections, 1000)
        XCTAssertEqual(tooMany.maxIdleUpstream, 250)
        XCTAssertFalse(tooMany.fitsDescriptorLimit)
        XCTAssertTrue(tooMany.bannerLines.contains("warning: --max-connections 1000 needs about 2314 open files but the limit is 128"),
                      tooMany.bannerLines)
        XCTAssertTrue(tooMany.bannerLines.contains("ulimit -n"), tooMany.bannerLines)

        let derived = ConnectionBudget(descriptorLimit: 1024, eventLoops: 2)
        XCTAssertEqual(derived.bannerLines,
                       "Connections: at most 426 clients at once, more get 503 (from the open-file limit 1024; --max-connections to change)\n")
    }

    /// The idle pool is split between the loops, rounded up so none gets zero.
    func testIdleShareRoundsUp() {
        XCTAssertEqual(ConnectionBudget(descriptorLimit: 1024, eventLoops: 2).maxIdleUpstreamPerLoop, 53)
        XCTAssertEqual(ConnectionBudget(descriptorLimit: 1024, eventLoops: 4).maxIdleUpstreamPerLoop, 27)
        XCTAssertEqual(ConnectionBudget(descriptorLimit: 1024, maxIdleUpstream: 5, eventLoops: 2).maxIdleUpstreamPerLoop, 3)
        XCTAssertEqual(ConnectionBudget(descriptorLimit: 1024, maxIdleUpstream: 0, eventLoops: 2).maxIdleUpstreamPerLoop, 0)
        XCTAssertEqual(ConnectionBudget(descriptorLimit: 1024, eventLoops: 0).maxIdleUpstreamPerLoop, 106)
    }

    /// The soft limit is read from the process (positive) and raising it never fails loudly.
    func testDescriptorLimitOfThisProcess() {
        XCTAssertGreaterThan(DescriptorLimit.soft, 0)
        let raise = DescriptorLimit.raiseSoftToHard()
        XCTAssertEqual(raise.current, DescriptorLimit.soft)
        XCTAssertEqual(DescriptorLimit.Raise.raised(from: 1024, to: 4096).bannerLine,
                       "Open-file limit raised from 1024 to 4096 (the hard limit).")
        XCTAssertNil(DescriptorLimit.Raise.unchanged(1024).bannerLine)
        XCTAssertEqual(DescriptorLimit.Raise.failed(current: 1024, wanted: 4096, reason: "Operation not permitted").bannerLine,
                       "Open-file limit stays at 1024: raising it to 4096 failed (Operation not permitted).")
    }
}
