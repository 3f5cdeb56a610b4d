import CaptureStore
import FlowExport
import Foundation
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// Issue 14 §6 in the controller: no key is lost, Enter opens the row drawn under the cursor,
/// unknown keys are named, `e` says what it exports, search wraps and highlights, Alt keys.
final class TUIKeysTests: TUIControllerTestCase {
    private func lines(_ screen: String) -> [String] { screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// `Enter 3` in one read: before the flow is loaded, `3` waits and then shows the Timing tab
    /// (it was dropped: the detail view ignored keys until the flow arrived).
    func testKeysTypedRightAfterEnterWaitForTheFlow() throws {
        for size in [ScreenSize(width: 80, height: 24), ScreenSize(width: 200, height: 50)] {
            let (controller, _) = try makeController(size: size, name: "\(size.width).sqlite")
            settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
            controller.handle(.enter)
            controller.handle(.character("3"))
            XCTAssertTrue(controller.render().text.contains("loading…"), "the flow is still loading")
            let screen = settle(controller) { _, screen in !screen.contains("loading…") && screen.contains("Started") }
            XCTAssertTrue(screen.contains("b.test/post/9"), screen)
        }
    }

    /// Several keys queued while loading apply in order: Tab Tab from Response is Request.
    func testQueuedKeysApplyInOrder() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.enter)
        controller.handle(.tab)
        controller.handle(.tab)
        let screen = settle(controller) { _, screen in !screen.contains("loading…") && screen.contains("POST /post/9 HTTP/1.1") }
        XCTAssertFalse(screen.contains("Started"), screen)
    }

    /// `p d` in one read: `d` waits for the pins view and removes the pin there; it never
    /// deletes the flow the list is on.
    func testKeysAfterPWaitForThePinsView() throws {
        let (controller, repository) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        let now = Date()
        try repository.savePins([PinnedDomain(host: "bank.test", reason: "client rejected the certificate", evidence: "",
                                              firstSeen: now, lastSeen: now, count: 1)])
        controller.handle(.character("p"))
        controller.handle(.character("d"))
        let screen = settle(controller) { _, screen in screen.contains("removed the pin for bank.test") }
        XCTAssertTrue(screen.contains("pinned domains: 0"), screen)
        XCTAssertEqual(try repository.count(), 10, "no flow was deleted")
        XCTAssertEqual(try repository.pinnedDomains().count, 0)
    }

    /// `n Enter` in one read opens the match, not the row the search started from.
    func testEnterAfterASearchJumpOpensTheMatch() throws {
        let (controller, _) = try makeController(size: ScreenSize(width: 80, height: 24))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.home)
        controller.handle(.character("s"))
        type("~d b.test", into: controller)
        controller.handle(.enter)
        controller.handle(.enter)
        var screen = settle(controller) { _, screen in !screen.contains("loading…") && !screen.contains("METHOD") }
        XCTAssertTrue(lines(screen)[0].contains("http://b.test/post/3"), screen)
        controller.handle(.character("q"))
        controller.handle(.character("n"))
        controller.handle(.enter)
        controller.handle(.character("3"))
        screen = settle(controller) { _, screen in !screen.contains("loading…") && screen.contains("Started") }
        XCTAssertTrue(lines(screen)[0].contains("http://b.test/post/6"), screen)
    }

    /// `w` cuts long lines instead of wrapping them, and the next flow opens the same way.
    func testWrapPreferenceCarriesToTheNextFlow() throws {
        let long = Flow(host: "a.test", path: "/" + String(repeating: "p", count: 150), status: 200)
        let (controller, _) = try makeController([long, long], size: ScreenSize(width: 80, height: 24))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 2 }
        controller.handle(.enter)
        controller.handle(.character("1"))
        var screen = settle(controller) { _, screen in !screen.contains("loading…") && screen.contains("GET /ppp") }
        XCTAssertEqual(lines(screen).filter { $0.hasPrefix("pppp") }.count, 1, "the request line wraps:\n\(screen)")
        controller.handle(.character("w"))
        screen = controller.render().text
        XCTAssertEqual(lines(screen).filter { $0.hasPrefix("pppp") }.count, 0, "cut at the edge:\n\(screen)")
        controller.handle(.character("q"))
        controller.handle(.character("k"))
        controller.handle(.enter)
        controller.handle(.character("1"))
        screen = settle(controller) { _, screen in !screen.contains("loading…") && screen.contains("GET /ppp") }
        XCTAssertEqual(lines(screen).filter { $0.hasPrefix("pppp") }.count, 0, "still cut:\n\(screen)")
    }

    /// Enter opens the row drawn under the cursor, even when a newer flow is already in the
    /// feed (following would move the cursor to it at the next frame). A selection off the
    /// tail stays on its flow while flows arrive.
    func testEnterOpensTheRowDrawnUnderTheCursor() throws {
        let (controller, repository) = try makeController(size: ScreenSize(width: 80, height: 24))
        var screen = settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        XCTAssertTrue(lines(screen).contains { $0.contains("/post/9") }, screen)
        try repository.insert([Flow(host: "new.test", path: "/get/new", status: 200)])
        let deadline = Date().addingTimeInterval(10)
        while controller.feed.latest().totalRows < 11, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertFalse(controller.render().text.contains("/get/new"), "not drawn yet")
        controller.handle(.enter)
        screen = settle(controller) { _, screen in !screen.contains("loading…") && !screen.contains("METHOD") }
        XCTAssertTrue(lines(screen)[0].contains("http://b.test/post/9"), "the flow that was drawn:\n\(screen)")
        controller.handle(.character("q"))
        settle(controller) { _, screen in screen.contains("/get/new") }

        // Off the tail: the selection stays on /get/5 while two flows arrive.
        controller.handle(.character("q"))
        controller.handle(.home)
        for _ in 0..<5 { controller.handle(.character("j")) }
        try repository.insert([Flow(host: "new.test", path: "/get/new2"), Flow(host: "new.test", path: "/get/new3")])
        settle(controller) { controller, _ in controller.listProgress.rows == 13 && controller.isListSettled }
        controller.handle(.enter)
        screen = settle(controller) { _, screen in !screen.contains("loading…") && !screen.contains("METHOD") }
        XCTAssertTrue(lines(screen)[0].contains("http://a.test/get/5"), screen)
    }

    /// `G Enter` right after a flow was stored opens that flow: G reads the newest flows at once
    /// (the feed here would otherwise poll only in an hour) and the keys after it wait for them.
    func testGEnterOpensAFlowStoredJustNow() throws {
        for size in [ScreenSize(width: 80, height: 24), ScreenSize(width: 200, height: 50)] {
            let (controller, repository) = try makeController(size: size, name: "\(size.width).sqlite", pollInterval: 3_600)
            settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
            controller.handle(.home)
            try repository.insert([Flow(host: "new.test", path: "/get/just-now", status: 200)])
            controller.handle(.character("G"))
            controller.handle(.enter)
            let screen = settle(controller) { _, screen in !screen.contains("loading…") && !screen.contains("METHOD") }
            XCTAssertTrue(lines(screen)[0].contains("http://new.test/get/just-now"), screen)
            controller.handle(.character("q"))
            let list = settle(controller) { controller, _ in controller.isListSettled }
            XCTAssertTrue(lines(list).last?.hasPrefix("following") == true, list)
        }
    }

    /// A key with no binding says so on the status line, in the list and in the detail view;
    /// the mouse is never a typo.
    func testUnknownKeysAreNamed() throws {
        for size in [ScreenSize(width: 80, height: 24), ScreenSize(width: 200, height: 50)] {
            let (controller, _) = try makeController(size: size, name: "\(size.width).sqlite")
            settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
            controller.handle(.character("o"))
            XCTAssertEqual(lines(controller.render().text).last?.hasPrefix("following  o: no such key — ? for help"), true,
                           controller.render().text)
            controller.handle(.control("t"))
            XCTAssertTrue(controller.render().text.contains("Ctrl-T: no such key — ? for help"))
            controller.handle(.character("j"))
            XCTAssertFalse(controller.render().text.contains("no such key"), "the next key clears it")
            controller.handle(.enter)
            settle(controller) { _, screen in !screen.contains("loading…") }
            controller.handle(.function(5))
            XCTAssertTrue(controller.render().text.contains("F5: no such key — ? for help"), controller.render().text)
            controller.handle(.mouseClick(row: 3, column: 3))
            XCTAssertFalse(controller.render().text.contains("no such key"))
            controller.handle(.escape)
            XCTAssertFalse(controller.render().text.contains("no such key"), "Esc in the list is no typo")
        }
    }

    /// `e` names what it will export before the file name: the view, or the marked flows.
    func testExportSaysWhatItWillExport() throws {
        let (controller, _) = try makeController(size: ScreenSize(width: 80, height: 24))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("e"))
        controller.handle(.control("u"))
        type("typed-early", into: controller)
        var screen = settle(controller) { _, screen in screen.contains("export 10 flows in view to: typed-early") }
        controller.handle(.escape)
        controller.handle(.character("/"))
        type("~d a.test", into: controller)
        controller.handle(.enter)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 6 }
        controller.handle(.character("m"))
        settle(controller) { _, screen in screen.contains("marked flow") }
        controller.handle(.character("e"))
        screen = settle(controller) { _, screen in lines(screen).last?.hasPrefix("export 1 marked flow to: proxyapp-") == true }
        controller.handle(.enter)
        screen = settle(controller) { _, screen in screen.contains("exported 1 marked flows") }
        XCTAssertFalse(screen.contains("export failed"), screen)
    }

    /// With a search, the matching rows on screen are bold and underlined; others are not.
    func testSearchMatchesAreHighlighted() throws {
        let (controller, _) = try makeController(size: ScreenSize(width: 200, height: 50))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("s"))
        type("~d b.test", into: controller)
        controller.handle(.enter)
        settle(controller) { controller, _ in controller.list.selectedIndex == 0 }
        var grid = ScreenGrid(width: 1, height: 1)
        let deadline = Date().addingTimeInterval(10)
        repeat {
            controller.worker.waitUntilIdle()
            controller.tick()
            grid = controller.render()
        } while !underlined(grid, row: 2) && Date() < deadline
        for row in 2..<12 {
            let text = grid.rowText(row)
            XCTAssertEqual(underlined(grid, row: row), text.contains("/post/"), "row \(row): \(text)")
        }
        // An empty search clears the highlight.
        controller.handle(.character("s"))
        controller.handle(.control("u"))
        controller.handle(.enter)
        grid = controller.render()
        XCTAssertFalse((2..<12).contains { underlined(grid, row: $0) })
    }

    private func underlined(_ grid: ScreenGrid, row: Int) -> Bool {
        grid[row, 40].style.underline && grid[row, 40].style.bold
    }

    /// Ctrl-U after a filter error clears the whole line (the error moved the cursor).
    func testControlUClearsThePromptAfterAnError() throws {
        let (controller, _) = try makeController(size: ScreenSize(width: 80, height: 24))
        controller.handle(.character("/"))
        type("~c 200 & (", into: controller)
        controller.handle(.enter)
        XCTAssertTrue(controller.render().text.contains("at column 11"))
        controller.handle(.alt("b"))
        controller.handle(.control("u"))
        type("~m GET", into: controller)
        XCTAssertEqual(lines(controller.render().text).last?.trimmingCharacters(in: .whitespaces), "filter: ~m GET")
    }

    /// Outside a prompt Alt-x is Escape then x (what those bytes meant before): `Esc q` quits.
    func testAltOutsideAPromptIsEscapeThenTheKey() throws {
        let (controller, _) = try makeController()
        controller.handle(.alt("q"))
        XCTAssertTrue(controller.wantsQuit)
        let (other, _) = try makeController(name: "other.sqlite")
        other.handle(.character("/"))
        other.handle(.alt("/"))  // Escape cancels the prompt, `/` opens it again
        XCTAssertEqual(lines(other.render().text).last?.trimmingCharacters(in: .whitespaces), "filter:")
        other.handle(.escape)
        other.handle(.character("?"))
        other.handle(.alt(Key.altBackspace))  // Escape, then Backspace: out of the help, not a stray DEL
        XCTAssertTrue(other.render().text.contains("METHOD"), other.render().text)
    }
}
