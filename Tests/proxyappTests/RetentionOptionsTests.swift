import ArgumentParser
import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp run --max-db-size --max-flows --max-age --[no-]keep-marked` and `proxyapp prune`:
/// the defaults, 'off', and every bad value refused with a line naming the option and the fix.
final class RetentionOptionsTests: XCTestCase {
    func testDefaultsKeepThirtyDaysAndTwoGiB() throws {
        let policy = try RunCommand.parse([]).retention.policy()
        XCTAssertEqual(policy, RetentionPolicy(maxFlows: nil, maxAge: 30 * 86_400, maxBytes: 2 << 30, keepMarked: true))
        XCTAssertEqual(RetentionOptions.bannerLine(policy),
                       "Keeping: up to 2.0 GiB, 30d (oldest go first; marked kept)")
    }

    func testEachLimitCanBeSetOrTurnedOff() throws {
        let set = try RunCommand.parse(["--max-db-size", "500MiB", "--max-flows", "100000", "--max-age", "12h",
                                        "--no-keep-marked"]).retention.policy()
        XCTAssertEqual(set, RetentionPolicy(maxFlows: 100_000, maxAge: 43_200, maxBytes: 500 << 20, keepMarked: false))
        XCTAssertEqual(RetentionOptions.bannerLine(set), "Keeping: up to 500.0 MiB, 100000 flows, 12h (oldest go first)")
        let off = try RunCommand.parse(["--max-db-size", "off", "--max-age", "OFF"]).retention.policy()
        XCTAssertTrue(off.keepsEverything)
        XCTAssertEqual(RetentionOptions.bannerLine(off), "Keeping: every flow (no --max-db-size, --max-flows or --max-age)")
    }

    func testBadValuesNameTheOptionAndTheFix() {
        let cases: [([String], String)] = [
            (["--max-db-size", "12x"], "--max-db-size takes a size of at least 1MiB, such as 500MiB or 2GiB, or 'off'; got '12x'."),
            (["--max-db-size", "512k"], "--max-db-size takes a size of at least 1MiB"),
            (["--max-db-size", "99999999999999999999G"], "--max-db-size takes a size"),
            (["--max-flows", "0"], "--max-flows takes a number of flows of at least 1, or 'off'; got '0'."),
            (["--max-flows=-5"], "--max-flows takes a number"),
            (["--max-flows", "lots"], "--max-flows takes a number"),
            (["--max-age", "0"], "--max-age takes a duration such as 30d, 12h or 90m, or 'off'; got '0'."),
            (["--max-age", "1y"], "--max-age takes a duration"),
            (["--max-age", "\u{1b}[31m"], "--max-age takes a duration"),
        ]
        for (arguments, expected) in cases {
            XCTAssertThrowsError(try RunCommand.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual(RunCommand.exitCode(for: error), .validationFailure, "\(arguments)")
                XCTAssertTrue(RunCommand.message(for: error).hasPrefix(expected), RunCommand.message(for: error))
            }
        }
    }

    func testPruneSaysWhatToRemoveAndRemovesTheOldest() throws {
        XCTAssertThrowsError(try PruneCommand.parse([])) { error in
            XCTAssertEqual(PruneCommand.message(for: error), "Say what to remove: --older-than 7d, --keep 10000, or both.")
        }
        XCTAssertThrowsError(try PruneCommand.parse(["--keep=-1"])) { error in
            XCTAssertEqual(PruneCommand.message(for: error), "--keep takes 0 or more flows; got -1.")
        }
        let directory = try makeTemporaryDirectory().url
        let missing = try PruneCommand.parse(["--data-dir", directory.path, "--keep", "1"])
        XCTAssertThrowsError(try missing.run()) { error in
            XCTAssertTrue("\(error)".contains("no capture database at"), "\(error)")
        }
        let command = try PruneCommand.parse(["--data-dir", directory.path, "--keep", "2", "--unmarked"])
        let repository = TrafficRepository(database: try TrafficDatabase(path: command.data.databasePath))
        let ids = try repository.insert((0..<6).map { Flow(host: "h\($0).test") })
        XCTAssertTrue(try repository.setMarked(true, id: ids[0]))
        try command.run()
        XCTAssertEqual(try repository.latestFlows(limit: 10).map(\.host).sorted(), ["h0.test", "h4.test", "h5.test"])
        try PruneCommand.parse(["--data-dir", directory.path, "--keep", "0"]).run()
        XCTAssertEqual(try repository.count(), 0, "without --unmarked, marked flows go too")
    }
}
