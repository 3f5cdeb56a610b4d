import Foundation
import XCTest
@testable import proxyapp

/// `SinceArgument`, the parser behind `proxyapp export --since`.
final class SinceArgumentTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let berlin = TimeZone(identifier: "Europe/Berlin")!

    func testDurationsCountBackFromNow() {
        XCTAssertEqual(parse("30m")?.date, now.addingTimeInterval(-1_800))
        XCTAssertEqual(parse("2h")?.date, now.addingTimeInterval(-7_200))
        XCTAssertEqual(parse("7d")?.date, now.addingTimeInterval(-7 * 86_400))
    }

    /// Up to 100 years back is a duration; more is refused (it used to trap when turned into
    /// epoch milliseconds).
    func testLongestDuration() {
        XCTAssertEqual(parse("36600d")?.date, now.addingTimeInterval(-36_600 * 86_400))
        XCTAssertEqual(parse("3162240000")?.date, now.addingTimeInterval(-3_162_240_000))
        XCTAssertNil(parse("36601d"))
    }

    func testDatesWithAndWithoutZone() throws {
        XCTAssertEqual(parse("2026-11-22T10:00:00Z")?.date, Date(timeIntervalSince1970: 1_795_341_600))
        XCTAssertEqual(parse("2026-11-22T10:00:00.250+01:00")?.date, Date(timeIntervalSince1970: 1_795_338_000.25))
        // Zone-less forms are local time: Berlin is UTC+1 in November.
        XCTAssertEqual(parse("2026-11-22T10:00:00")?.date, Date(timeIntervalSince1970: 1_795_338_000))
        XCTAssertEqual(parse("2026-11-22T10:00")?.date, Date(timeIntervalSince1970: 1_795_338_000))
        XCTAssertEqual(parse("2026-11-22")?.date, Date(timeIntervalSince1970: 1_795_302_000))
    }

    func testRejectsWhatIsNeitherADurationNorADate() {
        for bad in ["", "yesterday", "0m", "-5m", "2026-13-01", "2026-11-22T25:00", "22.11.2026",
                    "9300000000000000", "36601d", "3162240001s", "99999999999999999999"] {
            XCTAssertNil(parse(bad), bad)
        }
    }

    private func parse(_ text: String) -> SinceArgument? {
        SinceArgument(argument: text, now: now, timeZone: berlin)
    }
}
