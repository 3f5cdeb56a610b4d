@testable import FlowExport
import Foundation
import XCTest

/// The hand-written date formatter agrees with Foundation's.
final class ISO8601MillisecondsTests: XCTestCase {
    func testAgreesWithISO8601DateFormatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let fixed: [Double] = [0, 951_782_400.5, 4_107_542_400.999, 1_795_000_000.345]  // 2000-02-29, 2100-03-01
        let random = (0..<2000).map { _ in Double(Int64.random(in: 0..<8_000_000_000_000, using: &generator)) / 1000 }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(ISO8601Milliseconds.string(date), formatter.string(from: date), "\(seconds)")
        }
    }

    func testOutOfRangeDatesAreClamped() {
        XCTAssertEqual(ISO8601Milliseconds.string(Date(timeIntervalSince1970: -5)), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(ISO8601Milliseconds.string(Date(timeIntervalSince1970: 1e15)), "9999-12-31T23:59:59.999Z")
    }
}
