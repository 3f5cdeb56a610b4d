import CaptureStore
import Foundation
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// `TUIController` driven by keys against a real capture, as the terminal loop drives it: the
/// screen is read back from `render()`, the store's state from the repository.
final class TUIControllerTests: TUIControllerTestCase {
    private func listedPaths(_ screen: String) -> [String] {
        screen.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first(where: { $0.hasPrefix("/get/") || $0.hasPrefix("/post/") }).map(String.init)
        }
    }

    func testListShowsTheCaptureAndFollowsNewFlows() throws {
        let (controller, repository) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        try repository.insert([Flow(host: "late.test", path: "/get/late", status: 200)])
        let screen = settle(controller) { _, screen in screen.contains("/get/late") }
        XCTAssertTrue(screen.contains("11 flows"), screen)
        XCTAssertTrue(screen.contains("following"), screen)
    }

    func testFilterPromptAppliesAGoodFilterAndKeepsTheOldOneOnAnError() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("/"))
        type("~m POST", into: controller)
        controller.handle(.enter)
        var screen = settle(controller) { controller, _ in
            controller.isListSettled && controller.listProgress.rows == 4 && !controller.listProgress.scanning
        }
        XCTAssertEqual(listedPaths(screen), ["/post/0", "/post/3", "/post/6", "/post/9"])
        XCTAssertTrue(screen.contains("filter: ~m POST"), screen)

        // A bad expression: the prompt stays open with the error, the filter in force is kept.
        controller.handle(.character("/"))
        controller.handle(.control("u"))
        type("~c 200 & (", into: controller)
        controller.handle(.enter)
        screen = controller.render().text
        XCTAssertTrue(screen.contains("at column 11"), screen)
        XCTAssertTrue(screen.contains("filter in force: ~m POST"), screen)
        XCTAssertTrue(screen.split(separator: "\n").last?.hasPrefix("filter: ~c 200 & (") ?? false, screen)
        controller.handle(.escape)
        screen = settle(controller) { controller, _ in controller.isListSettled }
        XCTAssertEqual(listedPaths(screen), ["/post/0", "/post/3", "/post/6", "/post/9"])

        // An empty filter shows everything again.
        controller.handle(.character("/"))
        controller.handle(.control("u"))
        controller.handle(.enter)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
    }

    /// A filter over more flows than one slice of the backward scan (500 ids): every match
    /// arrives, once, in order.
    func testFilteredViewOverManySlices() throws {
        let flows = (0..<3_000).map { Flow(method: $0 % 7 == 0 ? "PUT" : "GET", host: "h.test", path: "/get/\($0)") }
        let (controller, _) = try makeController(flows)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 3_000 }
        controller.handle(.character("/"))
        type("~m PUT", into: controller)
        controller.handle(.enter)
        settle(controller) { controller, _ in
            controller.isListSettled && controller.listProgress.rows == 429 && !controller.listProgress.scanning
        }
        let ids = controller.feed.ids(at: 0..<1_000)
        XCTAssertEqual(ids, (0..<3_000).filter { $0 % 7 == 0 }.map { Int64($0 + 1) })
        controller.handle(.home)
        let screen = settle(controller) { controller, _ in controller.isListSettled }
        XCTAssertEqual(listedPaths(screen).first, "/get/0")
    }

    func testSearchJumpsBetweenMatches() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.home)
        controller.handle(.character("s"))
        type("~d b.test", into: controller)
        controller.handle(.enter)
        settle(controller) { controller, _ in controller.list.selectedIndex == 3 }
        controller.handle(.character("n"))
        settle(controller) { controller, _ in controller.list.selectedIndex == 6 }
        controller.handle(.character("N"))
        settle(controller) { controller, _ in controller.list.selectedIndex == 3 }
        // From the last match, n wraps around to the first, and N back again.
        controller.handle(.end)
        controller.handle(.character("n"))
        var screen = settle(controller) { _, screen in screen.contains("search wrapped to the top: ~d b.test") }
        XCTAssertEqual(controller.list.selectedIndex, 0, screen)
        controller.handle(.character("N"))
        screen = settle(controller) { _, screen in screen.contains("search wrapped to the bottom: ~d b.test") }
        XCTAssertEqual(controller.list.selectedIndex, 9, screen)
    }

    func testMarkDeleteAndClear() throws {
        let (controller, repository) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("m"))  // the last flow (following)
        settle(controller) { controller, _ in controller.list.row(at: 9)?.marked == true }
        XCTAssertEqual(try repository.flow(id: 10)?.marked, true)
        controller.handle(.character("m"))
        settle(controller) { controller, _ in controller.list.row(at: 9)?.marked == false }
        XCTAssertEqual(try repository.flow(id: 10)?.marked, false)

        controller.handle(.home)
        controller.handle(.character("d"))
        var screen = settle(controller) { controller, _ in controller.listProgress.rows == 9 && controller.isListSettled }
        XCTAssertNil(try repository.flow(id: 1))
        XCTAssertFalse(listedPaths(screen).contains("/post/0"), screen)

        controller.handle(.character("z"))
        XCTAssertTrue(controller.render().text.contains("Delete all 9 flows from the capture?"))
        controller.handle(.character("n"))  // anything but y cancels
        controller.worker.waitUntilIdle()
        XCTAssertEqual(try repository.count(), 9)
        controller.handle(.character("z"))
        controller.handle(.character("y"))
        screen = settle(controller) { controller, _ in controller.listProgress.rows == 0 && controller.isListSettled }
        XCTAssertEqual(try repository.count(), 0)
        XCTAssertTrue(screen.contains("No flows yet"), screen)
    }

    func testReadOnlyCaptureRefusesChanges() throws {
        let (controller, repository) = try makeController(context: TUIContext(readOnly: true, version: "test"))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        for key in [Key.character("m"), .character("d"), .character("z")] {
            controller.handle(key)
            XCTAssertTrue(controller.render().text.contains("read-only"), "\(key)")
        }
        controller.worker.waitUntilIdle()
        XCTAssertEqual(try repository.count(), 10)
        XCTAssertEqual(try repository.count(matching: FlowQuery(markedOnly: true)), 0)
    }

    func testExportWritesTheViewOrTheMarkedFlows() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("/"))
        type("~d a.test", into: controller)
        controller.handle(.enter)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 6 }
        controller.handle(.character("e"))
        controller.handle(.control("u"))
        type("view.har", into: controller)
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("exported 6 filtered flows") }
        XCTAssertEqual(try harURLs(directory.appendingPathComponent("view.har")).count, 6)

        controller.handle(.character("m"))
        settle(controller) { _, screen in screen.contains("marked flow") }
        controller.handle(.character("e"))
        controller.handle(.control("u"))
        type("marked.har", into: controller)
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("exported 1 marked flows") }
        XCTAssertEqual(try harURLs(directory.appendingPathComponent("marked.har")), ["http://a.test/get/8"])

        // An export that cannot be written says why, and the list is untouched.
        controller.handle(.character("e"))
        controller.handle(.control("u"))
        type("/nonexistent-dir/x.har", into: controller)
        controller.handle(.enter)
        let screen = settle(controller) { _, screen in screen.contains("export failed") }
        XCTAssertTrue(screen.contains("cannot write /nonexistent-dir/x.har"), screen)
    }

    private func harURLs(_ file: URL) throws -> [String] {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        return entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
    }

    func testSaveCurlWritesARunnableScript() throws {
        let (controller, _) = try makeController([
            Flow(method: "POST", host: "api.test", path: "/items", requestHeaders: [HeaderField(name: "X-Test", value: "it's")],
                 requestBody: CapturedBody(bytes: Data("a=1".utf8), size: 3), status: 201),
            Flow(kind: .tunnel, method: "CONNECT", host: "t.test", port: 443),
        ])
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 2 }
        controller.handle(.character("c"))
        settle(controller) { _, screen in screen.contains("save curl command to: flow-2.sh") }
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("CONNECT tunnel") }

        controller.handle(.home)
        controller.handle(.character("c"))
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("saved flow #1 as a curl command") }
        let script = try String(contentsOf: directory.appendingPathComponent("flow-1.sh"), encoding: .utf8)
        XCTAssertTrue(script.hasPrefix("#!/bin/sh\ncurl 'http://api.test/items'"), script)
        XCTAssertTrue(script.contains(#"-H 'X-Test: it'\''s'"#), script)
        let scriptPath = directory.appendingPathComponent("flow-1.sh").path
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: scriptPath))
        // Private to its owner: the script may hold credentials.
        let mode = (try FileManager.default.attributesOfItem(atPath: scriptPath)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o700)
    }

    func testPinsViewRemovesAPin() throws {
        let (controller, repository) = try makeController([])
        let now = Date()
        try repository.savePins([
            PinnedDomain(host: "bank.test", reason: "client rejected the certificate", evidence: "", firstSeen: now, lastSeen: now, count: 2),
            PinnedDomain(host: "pay.test", reason: "client rejected the certificate", evidence: "", firstSeen: now, lastSeen: now, count: 1),
        ])
        controller.handle(.character("p"))
        var screen = settle(controller) { _, screen in screen.contains("pinned domains: 2") }
        XCTAssertTrue(screen.contains("bank.test") && screen.contains("pay.test"), screen)
        controller.handle(.character("d"))
        screen = settle(controller) { _, screen in screen.contains("pinned domains: 1") }
        XCTAssertTrue(screen.contains("removed the pin for bank.test"), screen)
        XCTAssertEqual(try repository.pinnedDomains().map(\.host), ["pay.test"])
        controller.handle(.escape)
        XCTAssertTrue(controller.render().text.contains("No flows yet"))
    }

    /// Pins are per client: the view names each pin's client, and `d` removes the selected pin
    /// only, not the host's pins for other clients.
    func testPinsViewShowsClientsAndRemovesOnlyTheSelectedPin() throws {
        let (controller, repository) = try makeController([])
        let now = Date()
        let app = ClientIdentity(address: "10.0.0.2", fingerprint: "t130409h1_cccccccccccc_dddddddddddd")
        try repository.savePins([
            PinnedDomain(host: "bank.test", reason: "client sent unknown_ca after our certificate (TLS 1.3)", evidence: "",
                         firstSeen: now, lastSeen: now, count: 1, client: app),
            PinnedDomain(host: "bank.test", reason: "client sent unknown_ca after our certificate (TLS 1.3)", evidence: "",
                         firstSeen: now, lastSeen: now, count: 1),
        ])
        controller.handle(.character("p"))
        var screen = settle(controller) { _, screen in screen.contains("pinned domains: 2") }
        XCTAssertTrue(screen.contains("CLIENT") && screen.contains("any client") && screen.contains("10.0.0.2 t130409h1"), screen)
        controller.handle(.character("j"))
        controller.handle(.character("d"))
        screen = settle(controller) { _, screen in screen.contains("pinned domains: 1") }
        XCTAssertTrue(screen.contains("removed the pin for bank.test (10.0.0.2 t130409h1_"), screen)
        XCTAssertEqual(try repository.pinnedDomains().map(\.clientText), ["any client"])
    }

    func testHelpListsTheBindingsAndQuitAsksWhenTheProxyRuns() throws {
        let (controller, _) = try makeController(context: TUIContext(proxyRunning: true, version: "test"))
        controller.handle(.character("?"))
        var screen = controller.render().text
        XCTAssertTrue(screen.contains("delete all flows (asks first)"), screen)
        controller.handle(.character("x"))
        XCTAssertTrue(controller.render().text.contains("METHOD"))

        controller.handle(.character("q"))
        screen = controller.render().text
        XCTAssertTrue(screen.contains("Quit? This stops the proxy.  y/n"), screen)
        controller.handle(.character("n"))
        XCTAssertFalse(controller.wantsQuit)
        controller.handle(.control("c"))
        controller.handle(.character("y"))
        XCTAssertTrue(controller.wantsQuit)
    }

    func testQuitWithoutAProxyDoesNotAsk() throws {
        let (controller, _) = try makeController(context: TUIContext(version: "test"))
        controller.handle(.character("q"))
        XCTAssertTrue(controller.wantsQuit)
    }

    func testEnterOpensTheFlowAndQReturns() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.enter)
        let screen = settle(controller) { _, screen in screen.contains("b.test") && !screen.contains("METHOD") }
        XCTAssertFalse(screen.contains("loading…"), screen)
        controller.handle(.character("q"))
        XCTAssertTrue(controller.render().text.contains("METHOD"))
    }

    /// A flow some rules acted on: `◆` in the list (read through the bodiless listing), found by
    /// `~rule`, and its rule names on the Timing/TLS page.
    func testRuleTouchedFlowIsMarkedFilterableAndListsItsRules() throws {
        var flows = Self.tenFlows
        flows[4].appliedRules = ["Block ads", "staging"]
        let (controller, _) = try makeController(flows)
        var screen = settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        let lines = screen.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("◆") }.count, 1, screen)
        XCTAssertTrue(lines.contains { $0.hasPrefix("◆") && $0.contains("/get/4") }, screen)

        controller.handle(.character("/"))
        type("~rule ^staging$", into: controller)
        controller.handle(.enter)
        screen = settle(controller) { controller, _ in
            controller.isListSettled && controller.listProgress.rows == 1 && !controller.listProgress.scanning
        }
        XCTAssertEqual(listedPaths(screen), ["/get/4"])

        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("a.test/get/4") && !screen.contains("METHOD") }
        controller.handle(.character("3"))
        screen = settle(controller) { _, screen in screen.contains("Started") }
        XCTAssertTrue(screen.contains("Rules         Block ads, staging"), screen)
    }

    /// A flow a rule changed at 80×24: `f` switches the Request tab to the request as forwarded
    /// (read back from the capture, body included) and back; on a flow no rule changed `f` says so.
    func testOriginSideKeyAtEightyByTwentyFour() throws {
        var flows = Self.tenFlows
        flows[9].appliedRules = ["staging"]
        flows[9].forwardedRequest = ForwardedRequest(
            method: "POST", scheme: "http", host: "staging.test", port: 8080, path: "/post/9",
            headers: [HeaderField(name: "X-Env", value: "staging")],
            body: CapturedBody(bytes: Data("rewritten body".utf8), size: 14))
        let (controller, _) = try makeController(flows, size: ScreenSize(width: 80, height: 24))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.enter)  // the newest flow, last in the list: /post/9
        settle(controller) { _, screen in screen.contains("b.test/post/9") && !screen.contains("METHOD") }
        controller.handle(.character("1"))
        var screen = settle(controller) { _, screen in screen.contains("Request as sent by the client") }
        XCTAssertTrue(screen.contains(" Request (client)   Response (client) "), screen)
        controller.handle(.character("f"))
        screen = settle(controller) { _, screen in screen.contains("rewritten body") }
        XCTAssertTrue(screen.contains(" Request (forwarded)   Response (origin) "), screen)
        XCTAssertTrue(screen.contains("URL http://staging.test:8080/post/9"), screen)
        XCTAssertTrue(screen.contains("X-Env: staging"), screen)
        controller.handle(.character("f"))
        screen = settle(controller) { _, screen in screen.contains("Request as sent by the client") }
        XCTAssertFalse(screen.contains("rewritten body"), screen)

        controller.handle(.character("q"))
        controller.handle(.up)
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("a.test/get/8") && !screen.contains("METHOD") }
        controller.handle(.character("f"))
        screen = controller.render().text
        XCTAssertTrue(screen.contains("no rule changed this request"), screen)
        XCTAssertTrue(screen.contains(" Request   Response   Timing/TLS"), screen)
    }

    // MARK: found in review

    /// 80×24, the commonest terminal size, sizes the list like any other.
    func testAnEightyByTwentyFourTerminalShowsTheList() throws {
        let (controller, _) = try makeController(size: ScreenSize(width: 80, height: 24))
        let screen = settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        XCTAssertEqual(listedPaths(screen).count, 10, screen)
    }

    /// A click far below the list (or a garbage report) selects nothing and cannot overflow.
    func testClicksOutsideTheListAreIgnored() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.mouseClick(row: 4, column: 10))
        XCTAssertEqual(controller.list.selectedIndex, 2)
        controller.handle(.mouseClick(row: Int.max, column: 0))
        controller.handle(.mouseClick(row: 15, column: 0))
        controller.handle(.mouseClick(row: 0, column: 0))
        XCTAssertEqual(controller.list.selectedIndex, 2)
    }

    /// Older rows that arrived before the first tick of a new filter are not counted twice: Home
    /// stays on the first row.
    func testRowsPrependedBeforeTheFirstTickOfAFilterAreCountedOnce() throws {
        let flows = (0..<3_000).map { Flow(host: "h.test", path: "/get/\($0)") }
        let (controller, _) = try makeController(flows)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 3_000 }
        controller.handle(.character("/"))
        type("~d h.test", into: controller)
        controller.handle(.enter)
        let deadline = Date().addingTimeInterval(10)
        while controller.feed.latest().scanning || controller.feed.latest().totalRows < 3_000, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        controller.tick()
        controller.handle(.home)
        for _ in 0..<5 { controller.tick() }
        XCTAssertEqual(controller.list.selectedIndex, 0)
        let screen = settle(controller) { controller, _ in controller.isListSettled }
        XCTAssertEqual(listedPaths(screen).first, "/get/0", screen)
        XCTAssertEqual(controller.list.selectedIndex, 0)
    }

    /// Flows deleted by another process disappear from the view; the rows stay aligned.
    func testFlowsDeletedElsewhereLeaveTheView() throws {
        let flows = (0..<12).map { Flow(host: "h.test", path: "/get/\($0)") }
        let (controller, repository) = try makeController(flows)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 12 }
        try repository.delete(ids: [5, 6])
        controller.feed.invalidateRows()  // what a later scroll or mark would do: the window is read again
        let screen = settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        // Ids 5 and 6 were the flows /get/4 and /get/5.
        XCTAssertEqual(listedPaths(screen), [0, 1, 2, 3, 6, 7, 8, 9, 10, 11].map { "/get/\($0)" }, screen)
        XCTAssertFalse(screen.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "…" },
                       "no row is waiting to be loaded:\n\(screen)")
    }

    /// Two quick `m`s mark and unmark, even before the list shows the first.
    func testMarkTwiceQuicklyUnmarks() throws {
        let (controller, repository) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("m"))
        controller.handle(.character("m"))
        controller.worker.waitUntilIdle()
        XCTAssertEqual(try repository.flow(id: 10)?.marked, false)
        controller.handle(.character("m"))
        settle(controller) { controller, _ in controller.list.row(at: 9)?.marked == true }
        XCTAssertEqual(try repository.flow(id: 10)?.marked, true)
    }

    /// A key typed before the pins were read acts in the pins view once it is up (`p ?` is the
    /// pins view's help), never on the flow list.
    func testLatePinsDoNotReplaceAnotherScreen() throws {
        let (controller, _) = try makeController()
        controller.handle(.character("p"))
        controller.handle(.character("?"))  // the help, before the pins were read
        controller.worker.waitUntilIdle()
        controller.tick()
        XCTAssertTrue(controller.render().text.contains("key bindings"))
    }

    /// An error's column counts the blanks the user typed before the expression.
    func testFilterErrorColumnCountsLeadingBlanks() throws {
        let (controller, _) = try makeController()
        controller.handle(.character("/"))
        type("  ~x", into: controller)
        controller.handle(.enter)
        XCTAssertTrue(controller.render().text.contains("unknown operator ~x at column 3"), controller.render().text)
    }

    func testSearchOnAnEmptyViewSaysSo() throws {
        let (controller, _) = try makeController([])
        settle(controller) { controller, _ in controller.isListSettled && !controller.listProgress.scanning }
        controller.handle(.character("s"))
        type("~d x", into: controller)
        controller.handle(.enter)
        XCTAssertTrue(controller.render().text.contains("no flows to search"))
    }
}
