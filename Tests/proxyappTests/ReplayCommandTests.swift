import ArgumentParser
import XCTest

@testable import proxyapp

/// `proxyapp replay`'s flags: what is refused before anything is sent, counts that would overflow
/// included (a count times the ids was once multiplied unchecked).
final class ReplayCommandTests: XCTestCase {
    private func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try ReplayCommand.parse(arguments)
            return nil
        } catch {
            return ReplayCommand.message(for: error)
        }
    }

    func testCountsThatAreTooManyOrOverflowAreRefused() {
        XCTAssertEqual(refusal(["1", "2", "--count", "9223372036854775807"]),
                       "2 flows × --count 9223372036854775807 is more than 100000 replays per command.")
        XCTAssertEqual(refusal(["1", "--count", "100001"]), "1 flows × --count 100001 is more than 100000 replays per command.")
        XCTAssertNil(refusal(["1", "--count", "100000"]))
        XCTAssertEqual(FlowReplayService.sizeRefusal(ids: Int.max, count: 2), "\(Int.max) flows × --count 2 is more than 100000 replays per command")
        XCTAssertNil(FlowReplayService.sizeRefusal(ids: 1_000, count: 100))
    }

    func testOtherFlagsAreChecked() {
        XCTAssertEqual(refusal([]), "name at least one flow id (`proxyapp flows` lists them).")
        XCTAssertEqual(refusal(["1", "--count", "0"]), "--count must be at least 1 (got 0).")
        XCTAssertEqual(refusal(["1", "--concurrency", "65"]), "--concurrency must be between 1 and 64 (got 65).")
        XCTAssertNotNil(refusal(["abc"]))
    }
}
