import XCTest
@testable import proxyapp

/// `DurationArgument`, the parser behind `--pin-ttl`.
final class DurationArgumentTests: XCTestCase {
    func testUnits() {
        XCTAssertEqual(DurationArgument(argument: "7d")?.seconds, 7 * 86_400)
        XCTAssertEqual(DurationArgument(argument: "12h")?.seconds, 12 * 3_600)
        XCTAssertEqual(DurationArgument(argument: "30m")?.seconds, 1_800)
        XCTAssertEqual(DurationArgument(argument: "3600s")?.seconds, 3_600)
        XCTAssertEqual(DurationArgument(argument: "3600")?.seconds, 3_600)
        XCTAssertEqual(DurationArgument(argument: " 2D ")?.seconds, 2 * 86_400)
        XCTAssertEqual(DurationArgument(argument: "90s")?.timeInterval, 90)
    }

    /// Zero, negatives, fractions, unknown units, missing numbers and overflow are refused.
    func testRejectsBadInput() {
        for bad in ["", "d", "0", "0d", "-5m", "1.5h", "7w", "7 d", "7dd", "h12", "ten", "٣d", "9223372036854775807d"] {
            XCTAssertNil(DurationArgument(argument: bad), bad)
        }
    }

    /// The description uses the largest unit that is exact, so help shows `7d`, not `604800`.
    func testDescription() {
        XCTAssertEqual(DurationArgument(seconds: 7 * 86_400).description, "7d")
        XCTAssertEqual(DurationArgument(seconds: 36 * 3_600).description, "36h")
        XCTAssertEqual(DurationArgument(seconds: 90).description, "90s")
        XCTAssertEqual(DurationArgument(seconds: 120).description, "2m")
        XCTAssertEqual(PinsCommand.defaultPinTTL.description, "7d")
    }
}
