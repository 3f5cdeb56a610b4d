@testable import FlowExport
import XCTest

/// The timestamp shapes HAR writers use, and what is refused.
final class ISO8601TimestampTests: XCTestCase {
    func testShapes() throws {
        let base = 1_714_642_867.0  // 2024-05-02T09:41:07Z
        let cases: [(String, Double)] = [
            ("2024-05-02T09:41:07Z", base),
            ("2024-05-02T09:41:07.121Z", base + 0.121),
            ("2024-05-02T10:41:07.125+01:00", base + 0.125),
            ("2024-05-02T09:41:07.123456+00:00", base + 0.123456),
            ("2024-05-02T04:11:07-05:30", base),
            ("2024-05-02T10:41:07+0100", base),
            ("2024-05-02 09:41:07Z", base),
            ("1970-01-01T00:00:00Z", 0),
            ("2000-02-29T12:00:00Z", 951_825_600),
        ]
        for (text, expected) in cases {
            let date = try XCTUnwrap(ISO8601Timestamp.parse(text), text)
            XCTAssertEqual(date.timeIntervalSince1970, expected, accuracy: 0.000_001, text)
        }
    }

    func testRefused() {
        for text in ["", "2024-05-02", "2024-05-02T09:41:07", "2024-05-02T09:41:07.Z", "2024-13-02T09:41:07Z",
                     "2023-02-29T09:41:07Z", "2024-05-02T24:00:00Z", "2024-05-02T09:41:07Z trailing",
                     "Thu, 02 May 2024 09:41:07 GMT", "2024-05-02T09:41:07+1"] {
            XCTAssertNil(ISO8601Timestamp.parse(text), text)
        }
    }
}
