import Foundation
import XCTest

/// The terminal UI as a user runs it: the real `proxyapp` binary, a headless proxy capturing
/// curl's requests, and `proxyapp tui` on the same capture in a tmux pane, driven by keys and
/// read back from the screen. Covers the list filling from another process, a filter (and a bad
/// one that keeps it), opening a flow and going back, the HAR export of the filtered view, and a
/// clean quit that restores the terminal.
///
/// Assertions are on what the screen says, never on timing: every wait polls the pane for at
/// most a few seconds and fails with the last screen.
final class TUIEndToEndTests: XCTestCase {
    private static let width = 160
    private static let height = 40

    func testFilterOpenExportAndQuitInATerminal() async throws {
        try await TUITerminalRun.with(width: Self.width, height: Self.height) { run in
            try await exercise(run.terminal, proxy: run.proxy, origin: run.origin, scratch: run.scratch)
        }
    }

    /// The user's session, step by step.
    private func exercise(_ terminal: TmuxSession, proxy: ProxyAppProcess, origin: TestOrigin, scratch: URL) async throws {
        // Traffic through the headless proxy shows up in the TUI, which only reads the capture.
        for (path, arguments) in [("/echo/tui-alpha", []), ("/echo/tui-beta-get", []),
                                  ("/echo/tui-beta-post", ["--data-binary", "posted from the TUI test"])] {
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url(path), arguments)
            XCTAssertEqual(fetched.status, 200, "\(path): \(fetched.result.summary)\nproxy output:\n\(proxy.output)")
        }
        let allPaths = ["/echo/tui-alpha", "/echo/tui-beta-get", "/echo/tui-beta-post"]
        try await terminal.waitForScreen("the three flows listed") { screen in
            screen.contains("METHOD") && Self.listedPaths(screen) == allPaths
        }

        // A filter narrows the list and is shown in the header.
        try await openEmptyPrompt("filter:", with: "/", terminal)
        try await terminal.type("~u beta")
        try await terminal.press("Enter")
        let betaPaths = ["/echo/tui-beta-get", "/echo/tui-beta-post"]
        try await terminal.waitForScreen("only the beta flows, under `filter: ~u beta`") { screen in
            Self.firstLine(screen).contains("filter: ~u beta") && Self.listedPaths(screen) == betaPaths
        }

        // A bad filter is refused with an error line; Escape keeps the filter in force.
        try await openEmptyPrompt("filter:", with: "/", terminal)
        try await terminal.type("~x")
        try await terminal.press("Enter")
        let refused = try await terminal.waitForScreen("an error for `~x` above the reopened prompt") { screen in
            Self.lastLine(screen).hasPrefix("filter: ~x") && Self.lines(screen).dropLast().last?.contains("~x") == true
        }
        XCTAssertTrue(refused.contains("filter in force: ~u beta"), "the error names the filter kept:\n\(refused)")
        try await terminal.press("Escape")
        try await terminal.waitForScreen("the prompt and its error gone, the filter kept") { screen in
            !Self.lastLine(screen).hasPrefix("filter: ~x") && !screen.contains("filter in force")
                && Self.firstLine(screen).contains("filter: ~u beta") && Self.listedPaths(screen) == betaPaths
        }

        // Enter opens the selected flow (its title bar names method and URL); q goes back.
        let betaURLPrefix = origin.url("/echo/tui-beta-")
        try await terminal.press("Enter")
        try await terminal.waitForScreen("the detail view of a beta flow, titled with its URL") { screen in
            !screen.contains("METHOD") && Self.firstLine(screen).contains(betaURLPrefix)
        }
        try await terminal.press("q")
        try await terminal.waitForScreen("the filtered list again") { screen in
            screen.contains("METHOD") && Self.listedPaths(screen) == betaPaths
        }

        // e exports the filtered view as HAR.
        let harFile = scratch.appendingPathComponent("tui-export.har")
        try await openEmptyPrompt("export 2 flows in view to:", with: "e", terminal)
        try await terminal.type(harFile.path)
        try await terminal.press("Enter")
        try await terminal.waitForText("exported 2 filtered flows to \(harFile.path)")
        try assertHAR(harFile, holds: betaPaths.map(origin.url), methods: ["GET", "POST"])

        // A resize redraws the whole screen at the new size: status line at the new bottom,
        // right-aligned to the new width, the same rows listed.
        try await terminal.press("F")  // any key clears the export's message from the status line
        try await terminal.resize(width: 100, height: 24)
        try await terminal.waitForScreen("the list redrawn at 100×24") { screen in
            let lines = Self.lines(screen)
            return lines.count == 24 && lines.allSatisfy { $0.count <= 100 }
                && lines.last?.hasSuffix("? help  q quit") == true && lines.last?.count == 100
                && lines.dropLast().filter { $0.contains("/echo/tui-be") }.count == 2  // the status line has the URL too
        }

        // q quits: exit status 0, main screen back.
        try await terminal.press("q")
        let after = try await terminal.waitForText("TUI-EXITED")
        XCTAssertTrue(Self.lines(after).contains("TUI-EXITED 0"), "the TUI's exit status:\n\(after)")
        XCTAssertFalse(after.contains("METHOD"), "the list is gone from the screen:\n\(after)")
        let alternate = try await terminal.display("#{alternate_on}")
        XCTAssertEqual(alternate, "0", "the TUI left the alternate screen on:\n\(after)")
    }

    /// Presses `key`, clears the prompt's prefilled text (Ctrl-U) and waits for the empty prompt
    /// labelled `label` on the last line. (A prompt holding text could not be told from a status
    /// message such as `filter: ~u beta`; the empty one can.)
    private func openEmptyPrompt(_ label: String, with key: String, _ terminal: TmuxSession) async throws {
        try await terminal.press(key)
        try await terminal.press("C-u")
        try await terminal.waitForScreen("the empty `\(label)` prompt") { Self.lastLine($0) == label }
    }

    /// The exported file is a HAR whose entries are exactly `urls` (any order), with `methods`.
    private func assertHAR(_ file: URL, holds urls: [String], methods: [String]) throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        let log = try XCTUnwrap((json as? [String: Any])?["log"] as? [String: Any], "no HAR log in \(file.path)")
        let entries = try XCTUnwrap(log["entries"] as? [[String: Any]], "no entries in \(file.path)")
        let requests = entries.compactMap { $0["request"] as? [String: Any] }
        XCTAssertEqual(requests.count, entries.count, "every entry has a request")
        XCTAssertEqual(requests.compactMap { $0["url"] as? String }.sorted(), urls.sorted())
        XCTAssertEqual(requests.compactMap { $0["method"] as? String }.sorted(), methods.sorted())
    }

    // MARK: reading the screen

    private static func lines(_ screen: String) -> [String] { PaneText.lines(screen) }
    private static func firstLine(_ screen: String) -> String { PaneText.firstLine(screen) }
    private static func lastLine(_ screen: String) -> String { PaneText.lastLine(screen) }

    /// The test's flow paths listed on the screen, top to bottom.
    private static func listedPaths(_ screen: String) -> [String] {
        lines(screen).compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/echo/tui-") }.map(String.init)
        }
    }
}
