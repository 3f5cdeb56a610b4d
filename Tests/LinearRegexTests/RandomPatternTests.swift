import Foundation
import LinearRegex
import XCTest

/// Random patterns from regex punctuation, seeded so a failure repeats: each either compiles and
/// searches without trapping, or is refused with a reason in words and a position inside the
/// pattern. Run on a 512 KiB stack, as filters are.
final class RandomPatternTests: XCTestCase {
    /// xorshift64, fixed seed.
    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    func testRandomPatternsNeverTrap() {
        let alphabet = Array("()[]{}\\^$.|*+?-:=!<>#&'PQEkxpgRZ1a9,0 é")
        let subjects = ["", "a", "aa1", "((x))", "{1,2}", "é\n\\", String(repeating: "a", count: 1_000) + "b"]
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var random = Generator(state: 0x5EED_1234_ABCD_0001)
            for _ in 0..<20_000 {
                let length = Int.random(in: 1...12, using: &random)
                let pattern = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
                do throws(LinearRegexError) {
                    let regex = try LinearRegex(pattern, options: Bool.random(using: &random) ? [] : [.caseInsensitive])
                    outcome.compiled += 1
                    for subject in subjects { _ = regex.firstMatch(in: subject) }
                } catch {
                    outcome.refused += 1
                    if let offset = error.characterOffset, !(0..<pattern.count).contains(offset) {
                        outcome.problems.append("\(pattern): offset \(offset)")
                    }
                    for raw in ["invalid perl operator", "invalid escape sequence", "missing ):", "bad repetition operator:",
                                "pattern cannot be compiled"] where error.reason.contains(raw) {
                        outcome.problems.append("\(pattern): \(error.reason)")
                    }
                }
            }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        XCTAssertEqual(outcome.problems, [])
        XCTAssertGreaterThan(outcome.compiled, 2_000, "a weak corpus if few patterns compile")
        XCTAssertGreaterThan(outcome.refused, 2_000, "a weak corpus if few patterns are refused")
    }

    /// Written by the test's thread before it signals.
    private final class Outcome: @unchecked Sendable {
        var compiled = 0
        var refused = 0
        var problems: [String] = []
    }
}
