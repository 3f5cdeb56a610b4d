import ChildProcess
import Foundation
import TestSupport
import XCTest

/// Issue 14 §1 as a new user meets it, with the real binaries: `proxyapp run --headless`, curl,
/// `proxyapp flows`, `proxyapp pins` and `proxyapp tui` in a tmux pane. The first curl, before
/// the CA is installed, is told to install it (flows and TUI) and pins nothing; with the CA it is
/// intercepted; once it trusts the CA, refusing a host pins it for this client, and every place
/// a pin shows names the client and how to undo it.
final class PinsTUIEndToEndTests: XCTestCase {
    private static let untrustedNote =
        "this client does not trust the ProxyApp CA yet: install it from http://proxyapp.cert/"

    func testFirstHourWithoutAndWithTheCA() async throws {
        guard let tmux = TmuxSession.installedExecutable() else {
            throw XCTSkip("tmux is not installed: this test drives `proxyapp tui` in a tmux pane (scripts/test installs it; or `apt-get install tmux`)")
        }
        let proxyapp = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                     "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
        let scratch = try TemporaryDirectory("proxyapp-pins-e2e")
        defer { scratch.remove() }
        let data = scratch.url.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)

        let proxy = try await ProxyAppProcess.startHeadless(executable: proxyapp, dataDirectory: data)
        var terminal: TmuxSession?
        func cleanUp() async {
            await terminal?.kill()
            if !(await proxy.stop()) { XCTFail("proxyapp run did not stop on SIGTERM within 10 s") }
        }
        do {
            try await firstHour(proxyapp: proxyapp, proxy: proxy, data: data)
            let command = "TERM=xterm-256color '\(proxyapp)' tui --data-dir '\(data.path)'; echo TUI-EXITED $?; sleep 30"
            let session = try await TmuxSession.start(executable: tmux, socket: scratch.file("tmux.sock"),
                                                      width: 200, height: 50, command: command)
            terminal = session
            try await tui(session)
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }

    /// curl without the CA, with it, then refusing another host; what `flows` and `pins` say.
    private func firstHour(proxyapp: String, proxy: ProxyAppProcess, data: URL) async throws {
        let caFile = data.appendingPathComponent("ca/ProxyCA.pem").path
        // Nothing listens on port 1: a decrypted request gets the proxy's 502, a refused
        // handshake never gets that far.
        let first = try await Curl.viaProxy(proxy.port, ["-o", "/dev/null", "https://localhost:1/first"])
        XCTAssertEqual(first.exitCode, 60, "curl does not trust the proxy's CA yet: \(first.summary)")
        let flows = try await waitForOutput(proxyapp, ["flows", "--data-dir", data.path], containing: Self.untrustedNote)
        XCTAssertTrue(flows.contains(Self.untrustedNote), flows)

        let second = try await Curl.fetch(viaProxy: proxy.port, "https://localhost:1/second", ["--cacert", caFile])
        XCTAssertEqual(second.status, 502, "decrypted: the proxy itself answers inside the tunnel; \(second.result.summary)")
        let noPins = try await run(proxyapp, ["pins", "list", "--data-dir", data.path])
        XCTAssertEqual(noPins, "No pinned hosts.\n")

        // The same curl, now trusted, refuses 127.0.0.1 (it trusts only the system's roots there).
        let refusing = try await Curl.viaProxy(
            proxy.port, ["--cacert", "/etc/ssl/certs/ca-certificates.crt", "-o", "/dev/null", "https://127.0.0.1:1/third"])
        XCTAssertEqual(refusing.exitCode, 60, refusing.summary)
        let undo = "to undo: `p` in the TUI, or `proxyapp pins remove 127.0.0.1`"
        let pinnedFlows = try await waitForOutput(proxyapp, ["flows", "--data-dir", data.path], containing: undo)
        XCTAssertTrue(pinnedFlows.contains("[pinned 127.0.0.1 for 127.0.0.1 t13"), pinnedFlows)
        let pins = try await waitForOutput(proxyapp, ["pins", "list", "--data-dir", data.path], containing: "127.0.0.1")
        XCTAssertTrue(pins.hasPrefix("HOST       CLIENT"), pins)
        XCTAssertTrue(pins.contains("\n127.0.0.1  127.0.0.1 t13"), pins)
    }

    /// The list row says to install the CA; `p` shows the pin with its client; `d` removes it.
    private func tui(_ terminal: TmuxSession) async throws {
        try await terminal.waitForScreen("the refused handshake's row tells the user to install the CA") { screen in
            screen.contains("this client does not trust the ProxyApp CA yet")
        }
        try await terminal.press("p")
        let pins = try await terminal.waitForScreen("the pins view with the client") { screen in
            screen.contains("pinned domains: 1") && screen.contains("CLIENT")
        }
        XCTAssertTrue(pins.contains("127.0.0.1 t13"), pins)
        try await terminal.press("d")
        try await terminal.waitForScreen("the pin removed") { screen in
            screen.contains("pinned domains: 0") && screen.contains("removed the pin for 127.0.0.1 (127.0.0.1 t13")
        }
        try await terminal.press("q")
        try await terminal.press("q")
        try await terminal.waitForText("TUI-EXITED")
    }

    private func run(_ proxyapp: String, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run(proxyapp, arguments, timeout: 20)
        XCTAssertEqual(outcome.exitCode, 0, String(decoding: outcome.stderr, as: UTF8.self))
        return String(decoding: outcome.stdout, as: UTF8.self)
    }

    /// Runs the command until its output contains `text` (flows and pins reach the capture in the
    /// background): at most 50 tries, 100 ms apart; the last output either way.
    private func waitForOutput(_ proxyapp: String, _ arguments: [String], containing text: String) async throws -> String {
        var output = ""
        for _ in 0..<50 {
            output = try await run(proxyapp, arguments)
            if output.contains(text) { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return output
    }
}
