import Foundation
import Rules
import XCTest

@testable import proxyapp

/// `RulesStateText`: the one line about the rules that the banners and the TUI's `i` screen share.
final class RulesStateTextTests: XCTestCase {
    func testLines() {
        XCTAssertEqual(RulesStateText.line(enabled: 0, source: nil, lastError: nil, path: "/d/rules.yml"),
                       "Rules: none (create /d/rules.yml to add some; it is picked up while the proxy runs)")
        XCTAssertEqual(RulesStateText.line(enabled: 4, source: "/d/rules.yml", lastError: nil, path: "/d/rules.yml"),
                       "Rules: 4 active from /d/rules.yml (edits are reloaded while the proxy runs)")
        XCTAssertEqual(RulesStateText.line(enabled: 4, source: "/d/rules.yml", lastError: "/d/rules.yml:3:1: bad\nmore", path: "/d/rules.yml"),
                       "Rules: 4 active; the last reload of /d/rules.yml failed, the previous rules stay in force: /d/rules.yml:3:1: bad")
        let live = LiveRules()
        live.reloadFailed("line 1: nope")
        XCTAssertEqual(RulesStateText.line(live.status, path: "/d/rules.yml"),
                       "Rules: 0 active; the last reload of /d/rules.yml failed, the previous rules stay in force: line 1: nope")
    }
}
