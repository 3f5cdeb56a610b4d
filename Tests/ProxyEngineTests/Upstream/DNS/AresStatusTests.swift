import CAres
import XCTest
@testable import ProxyEngine

/// Every c-ares status becomes words a client can read, never c-ares's enum names or phrases.
final class AresStatusTests: XCTestCase {
    func testEveryStatusIsWords() {
        XCTAssertEqual(AresStatus.error(for: ARES_ETIMEOUT), .noAnswer)
        var reasons: Set<String> = []
        for status in Int32(1)...Int32(40) where status != ARES_ETIMEOUT {
            guard case .failed(let reason) = AresStatus.error(for: status) else { return XCTFail("status \(status)") }
            XCTAssertFalse(reason.isEmpty)
            XCTAssertFalse(reason.contains("ARES_"), reason)
            XCTAssertNotEqual(reason, String(cString: ares_strerror(status)), "c-ares's own phrase for \(status)")
            reasons.insert(reason)
        }
        XCTAssertGreaterThan(reasons.count, 10, "distinct failures read differently")
    }

    func testCommonFailures() {
        XCTAssertEqual(AresStatus.error(for: ARES_ENOTFOUND), .failed(reason: "no such name in DNS (NXDOMAIN)"))
        XCTAssertEqual(AresStatus.error(for: ARES_ENODATA), .failed(reason: "the name has no IPv4 or IPv6 address"))
        XCTAssertEqual(AresStatus.error(for: ARES_ECONNREFUSED),
                       .failed(reason: "no DNS server would answer: each refused, failed or could not be reached"))
        XCTAssertEqual(AresStatus.error(for: ARES_EDESTRUCTION), .failed(reason: "the proxy is shutting down"))
        XCTAssertEqual(AresStatus.error(for: 99), .failed(reason: "the DNS lookup failed (c-ares status 99)"))
    }
}
