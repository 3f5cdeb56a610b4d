import ChildProcess
import Foundation
import TestSupport
import XCTest

/// The forwarded view in a real terminal: a HAR whose entry carries `_forwarded` is imported
/// with the real binary, `proxyapp tui` opens it in an 80×24 tmux pane, and `f` switches the
/// Request tab between the client's request and the one forwarded to the origin.
final class TUIForwardedViewTests: XCTestCase {
    private static let har = #"""
    {"log": {"entries": [
      {"startedDateTime": "2026-11-22T10:00:00Z",
       "request": {"method": "POST", "url": "http://api.test/v1/items",
                   "headers": [{"name": "Host", "value": "api.test"}, {"name": "Content-Type", "value": "text/plain"}],
                   "postData": {"mimeType": "text/plain", "text": "client body"}},
       "response": {"status": 200, "statusText": "OK", "content": {"mimeType": "text/plain", "text": "ok"}},
       "_rules": ["staging"],
       "_forwarded": {"request": {"method": "POST", "url": "http://staging.test:8080/v2/items",
                                  "headers": [{"name": "Host", "value": "staging.test:8080"},
                                              {"name": "Content-Type", "value": "text/plain"}],
                                  "postData": {"mimeType": "text/plain", "text": "forwarded body"}}}}
    ]}}
    """#

    func testFSwitchesTheRequestTabAt80x24() async throws {
        guard let tmux = TmuxSession.installedExecutable() else {
            throw XCTSkip("tmux is not installed (scripts/test installs it; or `apt-get install tmux`)")
        }
        let proxyapp = try XCTUnwrap(ProxyAppProcess.builtExecutable, "build proxyapp first (`swift build --build-tests`)")
        let temporary = try TemporaryDirectory("proxyapp-tui-fwd")
        defer { temporary.remove() }
        let scratch = temporary.url
        let data = scratch.appendingPathComponent("data", isDirectory: true)
        let file = scratch.appendingPathComponent("forwarded.har")
        try Data(Self.har.utf8).write(to: file)
        let imported = try await ChildProcess.run(proxyapp, ["import", "--data-dir", data.path, "--har", file.path], timeout: 60)
        XCTAssertEqual(imported.exitCode, 0, String(decoding: imported.stderr, as: UTF8.self))

        let command = "TERM=xterm-256color '\(proxyapp)' tui --data-dir '\(data.path)'; echo TUI-EXITED $?; sleep 30"
        let terminal = try await TmuxSession.start(executable: tmux, socket: scratch.appendingPathComponent("tmux.sock").path,
                                                   width: 80, height: 24, command: command)
        do {
            try await terminal.waitForText("/v1/items")
            try await terminal.press("Enter")
            try await terminal.waitForText("Response (client)")
            try await terminal.press("1")
            let client = try await terminal.waitForText("Request as sent by the client")
            XCTAssertTrue(client.contains("client body"), client)
            try await terminal.press("f")
            let forwarded = try await terminal.waitForText("Request as forwarded to the origin")
            XCTAssertTrue(forwarded.contains("Request (forwarded)"), forwarded)
            XCTAssertTrue(forwarded.contains("URL http://staging.test:8080/v2/items"), forwarded)
            XCTAssertTrue(forwarded.contains("forwarded body"), forwarded)
            XCTAssertFalse(forwarded.contains("client body"), forwarded)
            try await terminal.press("f")
            try await terminal.waitForText("Request as sent by the client")
            try await terminal.press("q")
            try await terminal.press("q")
            try await terminal.waitForText("TUI-EXITED 0")
        } catch {
            await terminal.kill()
            throw error
        }
        await terminal.kill()
    }
}
