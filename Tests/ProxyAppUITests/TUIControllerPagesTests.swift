import CaptureStore
import Foundation
import ProxyModel
import TerminalUI
import TestSupport
import XCTest

@testable import ProxyAppUI

/// The `i` and `E` screens and the empty list, driven by keys as the terminal loop does.
final class TUIControllerPagesTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory().url
    }

    private var logPath: String { directory.appendingPathComponent("proxyapp.log").path }

    private func makeController(_ flows: [Flow], rules: @escaping @Sendable () -> [String] = { [] },
                                size: ScreenSize = ScreenSize(width: 80, height: 24)) throws -> TUIController {
        let repository = TrafficRepository(database: try TrafficDatabase(path: directory.appendingPathComponent("traffic.sqlite").path))
        try repository.insert(flows)
        let feed = FlowListFeed(repository: repository, timeZone: TimeZone(identifier: "UTC")!, pollInterval: 0.02)
        feed.start()
        addTeardownBlock { feed.stop() }
        let logPath = logPath
        let context = TUIContext(listenAddress: "127.0.0.1:8080", info: {
            ProxyInfo(proxy: .thisProcess, listenAddress: "127.0.0.1:8080", logPath: logPath, rules: rules())
        }, proxyRunning: true, outputDirectory: directory.path, version: "test")
        let controller = TUIController(repository: repository, feed: feed, context: context)
        controller.resize(size)
        return controller
    }

    /// Ticks until `condition` holds on the screen (at most 10 s).
    @discardableResult
    private func screen(_ controller: TUIController, file: StaticString = #filePath, line: UInt = #line,
                        until condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(10)
        var text = ""
        repeat {
            controller.tick()
            controller.eventLog.waitUntilIdle()
            text = controller.render().text
            if condition(text) { return text }
            Thread.sleep(forTimeInterval: 0.01)
        } while Date() < deadline
        XCTFail("not reached within 10 s; screen:\n\(text)", file: file, line: line)
        return text
    }

    /// The empty list says how to send traffic; `i` says it too, with the rules as they are now;
    /// any other key goes back.
    func testEmptyListAndInfoScreenFollowTheRules() throws {
        let rules = RulesBox()
        let controller = try makeController([], rules: { rules.lines })
        screen(controller) { $0.contains("curl -x http://127.0.0.1:8080 https://example.com/") && $0.contains("Rules: none yet") }
        controller.handle(.character("i"))
        screen(controller) { $0.hasPrefix("ProxyApp  info") && $0.contains("Rules: none yet") }
        rules.lines = ["Rules: 4 active from rules.yml"]
        screen(controller) { $0.contains("Rules: 4 active from rules.yml") }
        controller.handle(.character("x"))
        screen(controller) { $0.contains("METHOD") && $0.contains("Rules: 4 active from rules.yml") }
    }

    /// `E` shows the log's newest lines with its path, follows lines appended while it is up,
    /// and `q` goes back to the list.
    func testEventLogShowsAndFollowsTheLogFile() throws {
        try Data((1...40).map { "old line \($0)\n" }.joined().utf8).write(to: URL(fileURLWithPath: logPath))
        let controller = try makeController([Flow(host: "a.test", path: "/x", status: 200)])
        screen(controller) { $0.contains("/x") }
        controller.handle(.character("E"))
        var text = screen(controller) { $0.contains("old line 40") }
        XCTAssertTrue(text.hasPrefix("ProxyApp  event log  \(logPath.prefix(50))"), "the file's path in the title:\n\(text)")
        XCTAssertFalse(text.contains("old line 1\n"), "only the newest lines fit:\n\(text)")
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: logPath))
        handle.seekToEndOfFile()
        handle.write(Data("rules: reloaded rules.yml: 2 rules active\n".utf8))
        try handle.close()
        text = screen(controller) { $0.contains("rules: reloaded rules.yml: 2 rules active") }
        XCTAssertTrue(text.split(separator: "\n").dropLast().last?.hasPrefix("rules: reloaded") == true, "newest last:\n\(text)")
        controller.handle(.character("k"))
        text = screen(controller) { $0.contains("line 19 of 41") }
        controller.handle(.character("q"))
        screen(controller) { $0.contains("METHOD") && $0.contains("/x") }
    }

    /// With no log file yet, `E` says where it will be.
    func testEventLogWithoutAFile() throws {
        let controller = try makeController([])
        controller.handle(.character("E"))
        screen(controller) { $0.contains("No log lines yet:") && $0.contains("does not exist.") }
    }
}

/// Rules lines a test changes while the controller reads them.
private final class RulesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = ["Rules: none yet"]
    var lines: [String] {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
