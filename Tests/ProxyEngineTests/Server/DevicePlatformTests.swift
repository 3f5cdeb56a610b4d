import XCTest
@testable import ProxyEngine

/// User-Agents of real browsers, each told as its device; odd, missing and huge ones are
/// "unknown" or a best guess, never a crash.
final class DevicePlatformTests: XCTestCase {
    func testRealUserAgents() {
        let cases: [(String, DevicePlatform)] = [
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1", .iOS),
            ("Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", .iOS),
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36", .android),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15", .macOS),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36", .windows),
            ("Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0", .linux),
            ("curl/7.88.1", .unknown),
            ("", .unknown),
        ]
        for (agent, platform) in cases {
            XCTAssertEqual(DevicePlatform(userAgent: agent), platform, agent)
        }
        XCTAssertEqual(DevicePlatform(userAgent: nil), .unknown)
        XCTAssertEqual(DevicePlatform(userAgent: String(repeating: "A", count: 100_000) + "iPhone"), .unknown,
                       "only the first KiB is looked at")
    }
}
