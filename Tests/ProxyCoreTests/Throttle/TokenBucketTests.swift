import ProxyCore
import XCTest

/// The pacing arithmetic alone, on a clock the test moves: a burst of 50 ms of the rate, then
/// bytes at the rate, and the wait for the next bytes computed exactly.
final class TokenBucketTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    func testABurstThenTheRate() {
        var bucket = TokenBucket(bytesPerSecond: 125_000, now: 0)  // 1 mbit
        XCTAssertEqual(bucket.capacity, 6_250)
        XCTAssertEqual(bucket.take(upTo: 100_000, now: 0), 6_250, "a full bucket lets one burst through")
        XCTAssertEqual(bucket.take(upTo: 100_000, now: 0), 0)
        XCTAssertEqual(bucket.nanosecondsUntilAvailable(6_250, now: 0), second / 20)
        XCTAssertEqual(bucket.take(upTo: 100_000, now: second / 100), 1_250, "10 ms of the rate")
        XCTAssertEqual(bucket.take(upTo: 500, now: second), 500)
        XCTAssertEqual(bucket.take(upTo: 100_000, now: second), 5_750, "refill stops at the capacity")
    }

    func testOverManySmallStepsTheRateHolds() {
        var bucket = TokenBucket(bytesPerSecond: 32_000, now: 0)
        var passed = 0
        var now: UInt64 = 0
        while now < 10 * second {
            passed += bucket.take(upTo: 1_000, now: now)
            now += 3_000_000  // every 3 ms
        }
        // 10 s at 32,000 B/s plus the first burst; never more.
        XCTAssertLessThanOrEqual(passed, 320_000 + bucket.capacity)
        XCTAssertGreaterThanOrEqual(passed, 320_000 - 1_000)
    }

    func testTinyAndHugeRates() {
        var slow = TokenBucket(bytesPerSecond: 0, now: 0)
        XCTAssertEqual(slow.bytesPerSecond, 1)
        XCTAssertEqual(slow.capacity, 1460, "at least one TCP segment per burst")
        XCTAssertEqual(slow.take(upTo: 5_000, now: 0), 1460)
        XCTAssertEqual(slow.nanosecondsUntilAvailable(1, now: 0), second)
        var fast = TokenBucket(bytesPerSecond: 12_500_000_000, now: 0)
        XCTAssertEqual(fast.take(upTo: Int.max, now: 0), 625_000_000)
        XCTAssertEqual(fast.nanosecondsUntilAvailable(10, now: 0), 1, "never 0 while bytes are missing")
        XCTAssertEqual(fast.nanosecondsUntilAvailable(10, now: 5), 0, "5 ns refill 62 bytes")
    }

    func testAClockGoingBackwardsGrantsNothingExtra() {
        var bucket = TokenBucket(bytesPerSecond: 10_000, now: second)
        XCTAssertEqual(bucket.take(upTo: 10_000, now: second), 1460)
        XCTAssertEqual(bucket.take(upTo: 10_000, now: 0), 0)
    }
}
