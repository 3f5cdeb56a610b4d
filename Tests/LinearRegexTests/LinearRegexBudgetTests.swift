import LinearRegex
import XCTest

/// The regexes of one rules file or filter share a budget of compiled instructions; past it a
/// pattern is refused without being compiled.
final class LinearRegexBudgetTests: XCTestCase {
    func testPatternsAreChargedUntilTheBudgetIsSpent() throws {
        var budget = LinearRegexBudget(limit: 1_000)
        let first = try budget.compile("a{400}")
        XCTAssertEqual(budget.used, first.programSize)
        XCTAssertGreaterThan(first.programSize, 400)
        _ = try budget.compile("b{400}", options: .caseInsensitive)
        XCTAssertThrowsError(try budget.compile("c{400}")) { error in
            let error = error as? LinearRegexError
            XCTAssertEqual(error?.pattern, "c{400}")
            XCTAssertTrue(error?.reason.hasPrefix("with the regexes before it, this one passes the 1000 instructions") == true)
        }
        XCTAssertThrowsError(try budget.compile("d"), "once spent, even a small pattern is refused")
        var fresh = LinearRegexBudget()
        XCTAssertThrowsError(try fresh.compile("(?=x)"), "a pattern RE2 refuses is refused as usual")
        XCTAssertEqual(fresh.used, 0)
    }

    /// The default holds every ordinary pattern many times over, and a handful of huge ones.
    func testDefaultLimit() throws {
        var budget = LinearRegexBudget()
        for index in 0..<2_000 { _ = try budget.compile("^/api/v[12]/users/\(index)/[a-z]+\\.json$") }
        var refused = 0
        for _ in 0..<10 where (try? budget.compile("\\pL{100}")) == nil { refused += 1 }
        XCTAssertEqual(refused, 3, "about 120,000 instructions each: seven fit beside the others")
    }
}
