import Foundation
import TestSupport
import XCTest

/// What every TUI end-to-end test runs in: a test origin, `proxyapp run --headless` capturing
/// into a scratch data directory, and `proxyapp tui` on that capture in a tmux pane of the size
/// asked for (started in the scratch directory, so relative export names land there).
struct TUITerminalRun {
    let terminal: TmuxSession
    let proxy: ProxyAppProcess
    let origin: TestOrigin
    let proxyapp: String
    let scratch: URL
    var dataDirectory: URL { scratch.appendingPathComponent("data", isDirectory: true) }

    /// Sets everything up, runs `body`, and tears it all down whatever happened. Skips the test
    /// when tmux is not installed; fails when `proxyapp` was not built.
    /// - Parameter environment: `NAME=value` words put before `proxyapp tui` (`VISUAL=/path/editor.sh`).
    static func with(width: Int, height: Int, environment: String = "",
                     _ body: (TUITerminalRun) async throws -> Void) async throws {
        guard let tmux = TmuxSession.installedExecutable() else {
            throw XCTSkip("tmux is not installed: this test drives `proxyapp tui` in a tmux pane (scripts/test installs it; or `apt-get install tmux`)")
        }
        let proxyapp = try XCTUnwrap(ProxyAppProcess.builtExecutable,
                                     "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
        let temporary = try TemporaryDirectory("proxyapp-tui-e2e")
        defer { temporary.remove() }
        let scratch = temporary.url
        let dataDirectory = scratch.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)

        let origin = try await TestOrigin.start()
        var proxy: ProxyAppProcess?
        var terminal: TmuxSession?
        func cleanUp() async {
            await terminal?.kill()
            if let proxy, !(await proxy.stop()) { XCTFail("proxyapp run did not stop on SIGTERM within 10 s") }
            await origin.shutdown()
        }
        do {
            let running = try await ProxyAppProcess.startHeadless(executable: proxyapp, dataDirectory: dataDirectory)
            proxy = running
            let command = "cd '\(scratch.path)' && TERM=xterm-256color \(environment) '\(proxyapp)' tui --data-dir '\(dataDirectory.path)'; "
                + "echo TUI-EXITED $?; sleep 30"
            let session = try await TmuxSession.start(executable: tmux, socket: scratch.appendingPathComponent("tmux.sock").path,
                                                      width: width, height: height, command: command)
            terminal = session
            try await body(TUITerminalRun(terminal: session, proxy: running, origin: origin, proxyapp: proxyapp, scratch: scratch))
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
    }
}

/// Reading a captured pane (`TmuxSession.screen()`): its lines without trailing blanks or the
/// empty rows below the last text.
enum PaneText {
    static func lines(_ screen: String) -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }.reversed().drop { $0.isEmpty }.reversed()
    }

    static func firstLine(_ screen: String) -> String { lines(screen).first ?? "" }

    /// The last line with text: the status line (or a prompt) at the bottom of the screen.
    static func lastLine(_ screen: String) -> String { lines(screen).last ?? "" }
}
