import Foundation
import XCTest

/// Acting from a `proxyapp tui` attached to a running proxy, in a real terminal (tmux): `R` lends
/// the terminal to a scripted `$VISUAL`, takes it back and sends what the script saved through
/// the proxy's control channel; `b` sets a breakpoint, the held request shows above the flows
/// while curl waits, and `a` lets it go; `R` on a held response edits what the client gets.
final class TUIActEndToEndTests: XCTestCase {
    /// An executable `$VISUAL` that runs `script` (sh) on the file it is given.
    private func scriptedEditor(_ script: String) throws -> String {
        let editor = try makeTemporaryDirectory("tui-act-editor").url.appendingPathComponent("editor.sh").path
        try "#!/bin/sh\n\(script) \"$1\"\n".write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)
        return editor
    }

    /// Sets the breakpoint filter with `b` in the TUI, then sends curl with `body` to /echo and
    /// waits until the TUI lists it held; returns the waiting curl and the screen.
    private func holdAnEcho(_ filter: String, body: String, in run: TUITerminalRun) async throws -> (Task<Curl.Fetched, any Error>, String) {
        try await run.terminal.waitForText("METHOD")
        try await run.terminal.press("b")
        try await run.terminal.type(filter)
        try await run.terminal.press("Enter")
        try await run.terminal.waitForScreen("the filter in the header") { $0.contains("intercept: \(filter)") }
        let port = run.proxy.port, url = run.origin.url("/echo")
        let waiting = Task { try await Curl.fetch(viaProxy: port, url, ["--data-binary", body]) }
        // The header's count and the held row are drawn in one frame, but a capture can fall
        // between the two writes: wait for both.
        let screen = try await run.terminal.waitForScreen("the held exchange above the flows") {
            $0.contains("HELD: 1") && $0.contains("⏸ #1 ")
        }
        return (waiting, screen)
    }

    func testEditAndResendThroughAScriptedEditor() async throws {
        // The "person": changes the body and adds a header, as someone in vi would.
        let editor = try scriptedEditor("sed -i -e 's/original body/edited body/' -e 's/^Content-Type:.*$/&\\nX-Edited: by-script/'")
        try await TUITerminalRun.with(width: 100, height: 24, environment: "VISUAL='\(editor)'") { run in
            let first = try await Curl.fetch(viaProxy: run.proxy.port, run.origin.url("/echo"),
                                             ["--data-binary", "original body", "-H", "Content-Type: text/plain"])
            XCTAssertEqual(first.status, 200)
            try await run.terminal.waitForText("/echo")
            try await run.terminal.press("R")
            let screen = try await run.terminal.waitForScreen("the edited request's answer") { $0.contains("→ 200 OK") }
            XCTAssertTrue(screen.contains("METHOD"), "the TUI took the terminal back:\n\(screen)")
            let sent = try XCTUnwrap(run.origin.log.requests.last)
            XCTAssertEqual(sent.bodyPrefix, Data("edited body".utf8))
            XCTAssertEqual(sent.headers.first(named: "x-edited"), "by-script")
            try await run.terminal.waitForScreen("the new flow, marked as sent again") { $0.contains("↻") }
        }
    }

    func testABreakpointSetInTheTUIHoldsARequestUntilAccepted() async throws {
        try await TUITerminalRun.with(width: 100, height: 24) { run in
            let (waiting, screen) = try await holdAnEcho("~q & ~u /echo", body: "held", in: run)
            XCTAssertTrue(screen.contains("⏸ #1 request"), screen)
            XCTAssertEqual(run.origin.log.requests.count, 0)
            try await run.terminal.press("a")
            let fetched = try await waiting.value
            XCTAssertEqual(fetched.bodyText, "held")
            try await run.terminal.waitForScreen("the held list emptied") { !$0.contains("HELD") }
            try await run.terminal.press("q")
            try await run.terminal.waitForText("TUI-EXITED 0")
        }
    }

    /// `R` on a held response in an attached TUI: the scripted editor changes its status line and
    /// body, and curl, waiting all the while, gets the edited response.
    func testAHeldResponseEditedInTheTUIReachesTheWaitingClient() async throws {
        let editor = try scriptedEditor("sed -i -e 's/^HTTP\\/1.1 200 OK$/HTTP\\/1.1 418 Teapot/' -e '$ s/.*/short and stout/'")
        try await TUITerminalRun.with(width: 100, height: 24, environment: "VISUAL='\(editor)'") { run in
            let (waiting, screen) = try await holdAnEcho("~s & ~u /echo", body: "from the origin", in: run)
            XCTAssertTrue(screen.contains("⏸ #1 response 200"), screen)
            try await run.terminal.press("R")
            let fetched = try await waiting.value
            XCTAssertEqual(fetched.status, 418)
            XCTAssertEqual(fetched.bodyText, "short and stout")
            try await run.terminal.waitForScreen("the edit confirmed") { $0.contains("edited #1: the client gets it as saved") }
        }
    }
}
