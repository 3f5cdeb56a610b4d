@testable import Rules
import RulesTestSupport
import XCTest

/// The rules in force: swapped whole, with a status that remembers a failed reload.
final class LiveRulesTests: XCTestCase {
    private func rules(_ count: Int, source: String? = "rules.yaml") -> RuleSet {
        let list = (0..<count).map { index in
            Rule(name: "r\(index)", match: RuleMatch(hosts: RulesTestSupport.hosts("a\(index).com")), action: .block(BlockAction()))
        }
        return RuleSet(rules: list, source: source)
    }

    /// Without rules the status is off, with no source and no error.
    func testEmpty() {
        let live = LiveRules()
        XCTAssertEqual(live.current.rules.count, 0)
        XCTAssertNil(live.status.source)
        XCTAssertEqual(live.status.enabledRules, 0)
        XCTAssertNil(live.status.lastError)
        XCTAssertEqual(live.status.summary, "off")
    }

    /// The source comes from the set unless given; the count is of enabled rules.
    func testInitialStatus() {
        var set = rules(3, source: "/a/rules.yaml")
        XCTAssertEqual(LiveRules(set).status.source, "/a/rules.yaml")
        XCTAssertEqual(LiveRules(set, source: "/b/rules.yaml").status.source, "/b/rules.yaml")
        XCTAssertEqual(LiveRules(set).status.summary, "3 active")
        var list = set.rules
        list[1].enabled = false
        set = RuleSet(rules: list)
        XCTAssertEqual(LiveRules(set).status.enabledRules, 2)
        XCTAssertEqual(LiveRules(set).status.summary, "2 active")
    }

    /// replace puts the new set in force, with a fresh status.
    func testReplace() {
        let live = LiveRules(rules(1))
        let before = live.status.loadedAt
        live.replace(with: rules(2), source: "/new.yaml")
        XCTAssertEqual(live.current.rules.map(\.name), ["r0", "r1"])
        XCTAssertEqual(live.status.source, "/new.yaml")
        XCTAssertEqual(live.status.enabledRules, 2)
        XCTAssertGreaterThanOrEqual(live.status.loadedAt, before)
    }

    /// A failed reload keeps the rules and says so; the next good one clears the error.
    func testReloadFailedKeepsTheRules() {
        let live = LiveRules(rules(2), source: "/r.yaml")
        live.reloadFailed("/r.yaml:1:8: bad")
        XCTAssertEqual(live.current.rules.map(\.name), ["r0", "r1"])
        XCTAssertEqual(live.status.lastError, "/r.yaml:1:8: bad")
        XCTAssertEqual(live.status.source, "/r.yaml")
        XCTAssertEqual(live.status.summary, "2 active, reload failed (E: log)")
        live.replace(with: rules(1), source: "/r.yaml")
        XCTAssertNil(live.status.lastError)
        XCTAssertEqual(live.status.summary, "1 active")
    }

    /// With no rules in force and a failed reload, the summary says both.
    func testSummaryOffWithError() {
        let live = LiveRules()
        live.reloadFailed("bad")
        XCTAssertEqual(live.status.summary, "off, reload failed (E: log)")
    }

    /// A snapshot taken before a swap keeps the rules it had.
    func testSnapshotSurvivesASwap() {
        let live = LiveRules(rules(1))
        let snapshot = live.current
        live.replace(with: .empty, source: nil)
        XCTAssertEqual(snapshot.rules.map(\.name), ["r0"])
        XCTAssertEqual(live.current.rules.count, 0)
    }
}
