import ChildProcess
import Foundation
import XCTest

/// Issue 14 §6 as a user types it, at 80×24 and 200×50: `proxyapp tui` in a tmux pane on the
/// capture of a headless proxy. Keys that belong together go in one `send-keys` (one write to
/// the terminal, so the TUI reads them at once): `Enter 3`, `G Enter`, `y u`. Wrapping and `w`,
/// readline keys in a prompt, `e` naming what it exports, unknown keys, `n`/`N` wrapping around
/// with matches highlighted, and `y` copying through OSC 52 into tmux's paste buffer exactly
/// what `proxyapp export --curl` prints.
///
/// Every wait polls the screen for at most a few seconds and fails with the last one.
final class TUIKeysEndToEndTests: XCTestCase {
    func testKeysAt80x24() async throws {
        try await run(width: 80, height: 24)
    }

    func testKeysAt200x50() async throws {
        try await run(width: 200, height: 50)
    }

    private static let longHeader = "X-Long: " + (0..<12).map { "value-\($0)-of-a-long-header" }.joined(separator: ";")
    private static let longBody = (0..<20).map { "word\($0)" }.joined(separator: "_") + "-" + String(repeating: "z", count: 150) + "-END"

    private func run(width: Int, height: Int) async throws {
        try await TUITerminalRun.with(width: width, height: height) { run in
            // OSC 52 from the pane sets tmux's paste buffer (tmux's default only passes it on).
            try await run.terminal.command("set-option", "-g", "set-clipboard", "on")
            try await exercise(run.terminal, width: width, proxy: run.proxy, origin: run.origin, proxyapp: run.proxyapp,
                               dataDirectory: run.dataDirectory)
        }
    }

    private func exercise(_ terminal: TmuxSession, width: Int, proxy: ProxyAppProcess, origin: TestOrigin, proxyapp: String,
                          dataDirectory: URL) async throws {
        for (path, arguments) in [("/echo/k1", []), ("/echo/k2", ["-H", Self.longHeader]),
                                  ("/echo/k3", ["--data-binary", Self.longBody])] {
            let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url(path), arguments)
            XCTAssertEqual(fetched.status, 200, "\(path): \(fetched.result.summary)")
        }
        try await terminal.waitForScreen("the three flows listed") { screen in
            ["/echo/k1", "/echo/k2", "/echo/k3"].allSatisfy(screen.contains) && Self.lastLine(screen).hasPrefix("following")
        }

        // Enter 3 in one write: the flow opens on its Timing tab (3 was lost before).
        try await terminal.press("Enter", "3")
        try await terminal.waitForScreen("flow k3 open on the Timing tab") { screen in
            Self.firstLine(screen).contains(origin.url("/echo/k3")) && screen.contains("Phases") && screen.contains("Connection")
        }
        // The body echoed back is one 290-character line: wrapped, whole, on the Response tab.
        try await terminal.press("2")
        var screen = try await terminal.waitForScreen("the response body") { $0.contains("word0_word1") }
        XCTAssertTrue(Self.unwrapped(screen, width: width).contains(Self.longBody), "the body wraps whole:\n\(screen)")
        // w cuts lines at the edge again, and wraps them again.
        try await terminal.press("w")
        screen = try await terminal.waitForScreen("the body cut at the edge") { screen in
            screen.contains("word0_word1") && !Self.unwrapped(screen, width: width).contains(Self.longBody)
        }
        XCTAssertFalse(screen.contains("-END"), "the end of the body is past the edge:\n\(screen)")
        try await terminal.press("w")
        try await terminal.waitForScreen("wrapped again") { Self.unwrapped($0, width: width).contains(Self.longBody) }
        try await terminal.press("q")
        try await terminal.waitForText("METHOD")

        // G Enter right after a new flow is drawn opens the new flow.
        let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo/k4"))
        XCTAssertEqual(fetched.status, 200)
        try await terminal.waitForText("/echo/k4")
        try await terminal.press("k", "k", "G", "Enter")
        try await terminal.waitForScreen("flow k4 open") { Self.firstLine($0).contains(origin.url("/echo/k4")) }
        try await terminal.press("q")
        try await terminal.waitForText("METHOD")

        // A long request header wraps in the Request tab.
        try await terminal.press("k", "k", "Enter", "1")
        screen = try await terminal.waitForScreen("flow k2's request") { $0.contains("X-Long: value-0") }
        XCTAssertTrue(Self.unwrapped(screen, width: width).contains(Self.longHeader), screen)
        try await terminal.press("q")
        try await terminal.waitForText("METHOD")

        // An unknown key says so.
        try await terminal.press("o")
        try await terminal.waitForScreen("the unknown key named") { Self.lastLine($0).contains("o: no such key — ? for help") }

        // A filter error moves the cursor; Ctrl-U still clears the whole line. Alt-B and Ctrl-K edit by words.
        try await terminal.press("/")
        try await terminal.press("C-u")
        try await terminal.type("~c 200 & (")
        try await terminal.press("Enter")
        try await terminal.waitForScreen("the error above the prompt") { $0.contains("at column 11") }
        try await terminal.press("C-u")
        try await terminal.waitForScreen("an empty prompt") { Self.lastLine($0) == "filter:" }
        try await terminal.type("~u k2 & ~m GET")
        try await terminal.press("M-b", "M-b", "C-k")
        try await terminal.waitForScreen("the line cut after Alt-B Alt-B Ctrl-K") { Self.lastLine($0) == "filter: ~u k2 & ~" }
        try await terminal.press("BSpace", "BSpace", "BSpace", "BSpace", "Enter")
        try await terminal.waitForScreen("only k2 listed") { screen in
            screen.contains("/echo/k2") && !screen.contains("/echo/k1") && Self.firstLine(screen).contains("filter: ~u k2")
        }

        // e names what it will export: the view, then the marked flows.
        try await terminal.press("e")
        try await terminal.waitForScreen("the export prompt naming the view") { Self.lastLine($0).hasPrefix("export 1 flow in view to:") }
        try await terminal.press("Escape")
        try await terminal.waitForScreen("the prompt closed") { !Self.lastLine($0).hasPrefix("export") }
        try await terminal.press("/")
        try await terminal.press("C-u", "Enter")
        try await terminal.waitForScreen("all four flows again") { screen in
            ["/echo/k1", "/echo/k2", "/echo/k3", "/echo/k4"].allSatisfy(screen.contains)
        }
        try await terminal.press("m")
        try await terminal.waitForText("marked flow")
        try await terminal.press("e")
        try await terminal.waitForScreen("the export prompt naming the mark") { Self.lastLine($0).hasPrefix("export 1 marked flow to:") }
        try await terminal.press("Escape")
        try await terminal.waitForScreen("the prompt closed") { !Self.lastLine($0).hasPrefix("export") }
        try await terminal.press("m")
        try await terminal.waitForText("unmarked flow")

        // Search: matches highlighted (bold, underlined); n and N wrap around the ends.
        try await terminal.press("s")
        try await terminal.press("C-u")
        try await terminal.type("~u k1 | ~m POST")
        try await terminal.press("Enter")
        try await terminal.waitForText("search wrapped to the top: ~u k1 | ~m POST")  // from k4, the last
        let styled = try await waitForStyled(terminal, "k1 and k3 underlined") { lines in
            Self.underlined(lines, "/echo/k1") && Self.underlined(lines, "/echo/k3")
        }
        XCTAssertFalse(Self.underlined(styled, "/echo/k2"), "k2 does not match")
        XCTAssertFalse(Self.underlined(styled, "/echo/k4"), "k4 does not match")
        try await terminal.press("n")
        try await terminal.waitForText("match: ~u k1 | ~m POST")
        try await terminal.press("n")
        try await terminal.waitForText("search wrapped to the top")
        try await terminal.press("N")
        try await terminal.waitForText("search wrapped to the bottom")

        // y u, y c: tmux's paste buffer holds the URL, then exactly what `export --curl` prints.
        try await terminal.press("y", "u")
        screen = try await terminal.waitForScreen("the URL copied") { $0.contains("copied the URL of flow #") }
        try await waitForBuffer(terminal, equal: origin.url("/echo/k3"))
        try await terminal.press("y", "c")
        screen = try await terminal.waitForScreen("the curl command copied") { $0.contains("copied the curl command of flow #") }
        let id = try XCTUnwrap(screen.range(of: #"(?<=curl command of flow #)[0-9]+"#, options: .regularExpression).map { String(screen[$0]) })
        let exported = try await ChildProcess.run(proxyapp, ["export", "--curl", id, "--data-dir", dataDirectory.path], timeout: 20)
        XCTAssertEqual(exported.exitCode, 0, String(decoding: exported.stderr, as: UTF8.self))
        // `export --curl` prints the command and a newline of its own.
        let printed = String(decoding: exported.stdout, as: UTF8.self)
        XCTAssertTrue(printed.hasSuffix("\n\n") && printed.contains("--data-binary"), printed)
        let curl = String(printed.dropLast())
        try await waitForBuffer(terminal, equal: curl)

        try await terminal.press("q")
        let after = try await terminal.waitForText("TUI-EXITED")
        XCTAssertTrue(Self.lines(after).contains("TUI-EXITED 0"), after)
    }

    // MARK: reading the screen

    /// Polls `capture-pane -e` until `condition` holds on its lines.
    private func waitForStyled(_ terminal: TmuxSession, _ what: String, until condition: ([String]) -> Bool) async throws -> [String] {
        let deadline = Date().addingTimeInterval(10)
        var last: [String] = []
        repeat {
            last = try await terminal.styledScreen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if condition(last) { return last }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        throw TmuxSession.Failure(description: "waited 10 s for \(what); last screen:\n\(last.joined(separator: "\n"))")
    }

    /// Polls tmux's newest paste buffer until it is `expected`.
    private func waitForBuffer(_ terminal: TmuxSession, equal expected: String) async throws {
        let deadline = Date().addingTimeInterval(10)
        var last = ""
        repeat {
            last = (try? await terminal.command("show-buffer")) ?? ""
            if last == expected { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        XCTFail("tmux's paste buffer is not what was copied:\n\(last)\n--- expected ---\n\(expected)")
    }

    /// True when `text` is drawn underlined. tmux writes only what changes from one cell to the
    /// next, across lines too, so the SGR state is followed from the top of the screen.
    private static func underlined(_ lines: [String], _ text: String) -> Bool {
        var underline = false
        for line in lines {
            var rest = Substring(line)
            while let escape = rest.range(of: "\u{1B}[") {
                if line.contains(text), rest[..<escape.lowerBound].contains(text) { return underline }
                rest = rest[escape.upperBound...]
                guard let end = rest.firstIndex(where: { $0.isLetter }) else { break }
                if rest[end] == "m" {
                    var parameters = rest[..<end].split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }[...]
                    while let parameter = parameters.popFirst() {
                        switch parameter {
                        case 0: underline = false
                        case 4: underline = true
                        case 24: underline = false
                        case 38, 48: parameters = parameters.dropFirst(parameters.first == 5 ? 2 : 4)  // colour arguments
                        default: break
                        }
                    }
                }
                rest = rest[rest.index(after: end)...]
            }
            if rest.contains(text) { return underline }
        }
        return false
    }

    /// The screen's rows padded to `width` and joined: a wrapped line reads whole again.
    private static func unwrapped(_ screen: String, width: Int) -> String {
        screen.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0).padding(toLength: width, withPad: " ", startingAt: 0) }.joined()
    }

    private static func lines(_ screen: String) -> [String] { PaneText.lines(screen) }
    private static func firstLine(_ screen: String) -> String { PaneText.firstLine(screen) }
    private static func lastLine(_ screen: String) -> String { PaneText.lastLine(screen) }
}
