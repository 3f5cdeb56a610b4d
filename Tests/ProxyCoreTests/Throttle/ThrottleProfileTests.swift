import ProxyCore
import XCTest

/// Rates, latencies and one-line throttles as people write them; every mistake said in words.
final class ThrottleProfileTests: XCTestCase {
    func testRatesInBitsAndBytes() throws {
        let cases: [(String, Int)] = [
            ("256kbit", 32_000), ("1mbit", 125_000), ("1.5mbit", 187_500), ("8Mbit", 1_000_000), ("1gbit", 125_000_000),
            ("100kbps", 12_500), ("2Mbps", 250_000), ("800bit", 100), ("100KB", 100_000), ("1MB", 1_000_000),
            ("2MiB", 2_097_152), ("64KiB", 65_536), (" 1mbit ", 125_000), ("1mbit/s", 125_000), ("512B", 512),
        ]
        for (text, bytes) in cases {
            XCTAssertEqual(try ThrottleRate.parse(text), bytes, text)
        }
    }

    func testRatesThatAreNotRates() {
        for text in ["", "kbit", "0kbit", "-1mbit", "1.2.3mbit", "1kb", "10", "1 tbit", "1e3kbit", "∞mbit", "1mbit extra",
                     String(repeating: "9", count: 400) + "mbit", "NaNmbit"] {
            XCTAssertThrowsError(try ThrottleRate.parse(text), text) { error in
                XCTAssertTrue("\(error)".contains("is not a rate: write a positive number and a unit"), "\(error)")
            }
        }
    }

    func testRatesBeyondTheLimitsSayWhich() {
        XCTAssertThrowsError(try ThrottleRate.parse("1bit")) { error in
            XCTAssertEqual("\(error)", "'1bit' is below the slowest rate, 8bit (one byte a second)")
        }
        XCTAssertThrowsError(try ThrottleRate.parse("900gbit")) { error in
            XCTAssertEqual("\(error)", "'900gbit' is above the fastest rate, 800gbit")
        }
        XCTAssertEqual(try ThrottleRate.parse("8bit"), 1)
    }

    func testRatesReadBack() {
        XCTAssertEqual(ThrottleRate.text(125_000), "1mbit")
        XCTAssertEqual(ThrottleRate.text(97_500), "780kbit")
        XCTAssertEqual(ThrottleRate.text(187_500), "1.5mbit")
        XCTAssertEqual(ThrottleRate.text(100), "800bit")
        XCTAssertEqual(ThrottleRate.text(nil), "unlimited")
    }

    func testPresetsAndFigures() throws {
        let threeG = try ThrottleSpec.parse("3g")
        XCTAssertEqual(threeG, ThrottleProfile.preset(named: "3g"))
        XCTAssertEqual(threeG.description, "3g (780kbit down, 330kbit up, 100ms)")
        XCTAssertEqual(try ThrottleSpec.parse("LTE").preset, "lte")
        let slower = try ThrottleSpec.parse("3g, latency=300ms")
        XCTAssertEqual(slower.latencyMilliseconds, 300)
        XCTAssertEqual(slower.downBytesPerSecond, 97_500)
        XCTAssertEqual(slower.preset, "3g*", "a changed preset says so")
        let figures = try ThrottleSpec.parse("down=1mbit,up=256kbit,latency=1.5s")
        XCTAssertEqual(figures, ThrottleProfile(downBytesPerSecond: 125_000, upBytesPerSecond: 32_000, latencyMilliseconds: 1500))
        XCTAssertEqual(figures.description, "1mbit down, 256kbit up, 1500ms")
        XCTAssertEqual(try ThrottleSpec.parse("latency=250").latencyMilliseconds, 250)
        for preset in ThrottleProfile.presets {
            XCTAssertFalse(preset.profile.isNone, preset.name)
            XCTAssertNotNil(preset.profile.downBytesPerSecond, preset.name)
        }
    }

    func testSpecsThatAreRefused() {
        let cases: [(String, String)] = [
            ("5g", "'5g' is neither a preset (edge, 3g, lte, dsl, wifi-lossy) nor key=value (down=, up=, latency=)"),
            ("down=1mbit,3g", "'3g' is neither a preset"),
            ("speed=1mbit", "unknown throttle figure 'speed': use down=, up= or latency="),
            ("down=1mbit,down=2mbit", "down= is given twice: give each figure once"),
            ("down=fast", "down='fast' is not a rate"),
            ("latency=61s", "latency '61s' must be a duration up to 60s"),
            ("latency=-5ms", "latency '-5ms' must be a duration up to 60s"),
            ("latency=0", "this throttle limits nothing"),
            ("", "'' is neither a preset"),
            (",,", "'' is neither a preset"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try ThrottleSpec.parse(text), text) { error in
                XCTAssertTrue("\(error)".hasPrefix(expected), "\(text): \(error)")
            }
        }
    }
}
