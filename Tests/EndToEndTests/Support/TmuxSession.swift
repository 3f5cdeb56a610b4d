import ChildProcess
import Foundation

/// One fixed-size tmux session on a tmux server of its own, so a test can drive a full-screen
/// program through a real terminal: type keys, read the screen back, wait for text.
///
/// The server listens on a socket in the test's scratch directory (`tmux -S`) and reads no
/// configuration (`-f /dev/null`), so it never touches, nor is changed by, the user's tmux.
/// Every tmux command runs with a clean environment and a time limit (`ChildProcess`), and
/// every wait is bounded and fails with the last screen it saw.
struct TmuxSession: Sendable {
    /// Why a tmux command failed, or why a wait gave up (what it waited for, the last screen).
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let executable: String
    let socket: String
    let target = "e2e"

    /// The tmux executable, or nil when tmux is not installed.
    static func installedExecutable() -> String? {
        let directories = ["/usr/bin", "/usr/local/bin", "/bin"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return directories.map { "\($0)/tmux" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts a server on `socket` with one detached `width`×`height` session running `command`
    /// through the shell.
    ///
    /// Foundation learns that a child ended when a socket it shares with the child closes. The
    /// tmux server forks from the client and would keep that socket open for its whole life, so
    /// the client would never be seen to end: bash closes every descriptor above 2 first. And a
    /// child spawned from a test thread inherits its blocked signals (SIGHUP, SIGTERM, …), which
    /// would keep `kill-server` from ending the pane's shell: `env --default-signal` clears them.
    static func start(executable: String, socket: String, width: Int, height: Int,
                      command: String) async throws -> TmuxSession {
        let session = TmuxSession(executable: executable, socket: socket)
        let closeInherited = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; exec /usr/bin/env --default-signal "$0" "$@""#
        try await session.run("/bin/bash", ["-c", closeInherited, executable, "-S", socket, "-f", "/dev/null",
                                             "new-session", "-d", "-s", session.target,
                                             "-x", String(width), "-y", String(height), command])
        return session
    }

    /// Types `text` as it is (`send-keys -l`: no key names).
    func type(_ text: String) async throws {
        try await tmux(["send-keys", "-t", target, "-l", text])
    }

    /// Presses keys by tmux name: `Enter`, `Escape`, `C-u`, `q`.
    func press(_ keys: String...) async throws {
        try await tmux(["send-keys", "-t", target] + keys)
    }

    /// Resizes the window (and the pane in it): what a user dragging the terminal does.
    func resize(width: Int, height: Int) async throws {
        try await tmux(["resize-window", "-t", target, "-x", String(width), "-y", String(height)])
    }

    /// The visible screen of the pane, one line per row.
    func screen() async throws -> String {
        try await tmux(["capture-pane", "-p", "-t", target])
    }

    /// The visible screen with its styles as escape sequences (`capture-pane -e`).
    func styledScreen() async throws -> String {
        try await tmux(["capture-pane", "-p", "-e", "-t", target])
    }

    /// Runs any tmux command on this server (`set-option -g set-clipboard on`, `show-buffer`).
    @discardableResult
    func command(_ arguments: String...) async throws -> String {
        try await tmux(arguments)
    }

    /// A tmux format expanded for the pane, e.g. `#{alternate_on}`.
    func display(_ format: String) async throws -> String {
        try await tmux(["display-message", "-p", "-t", target, format])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls the screen every 100 ms until `condition` holds and returns that screen; throws
    /// `Failure` naming `what` with the last screen after `timeout` seconds.
    @discardableResult
    func waitForScreen(_ what: String, timeout: TimeInterval = 10,
                       until condition: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        repeat {
            last = try await screen()
            if condition(last) { return last }
            try await Task.sleep(nanoseconds: 100_000_000)
        } while Date() < deadline
        throw Failure(description: "waited \(Int(timeout)) s for \(what); last screen:\n\(last)")
    }

    /// Waits until `text` is on the screen.
    @discardableResult
    func waitForText(_ text: String, timeout: TimeInterval = 10) async throws -> String {
        try await waitForScreen("\"\(text)\" on the screen", timeout: timeout) { $0.contains(text) }
    }

    /// Ends the server, its session and whatever runs in it.
    func kill() async {
        _ = try? await ChildProcess.run(executable, ["-S", socket, "kill-server"], timeout: 10)
    }

    /// Runs `tmux -S socket ARGUMENTS` and returns its standard output.
    @discardableResult
    private func tmux(_ arguments: [String]) async throws -> String {
        try await run(executable, ["-S", socket] + arguments)
    }

    /// Runs a program for at most 10 s and returns its standard output; throws on failure.
    @discardableResult
    private func run(_ program: String, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run(program, arguments, timeout: 10)
        guard outcome.exitCode == 0, !outcome.killed else {
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (exit \(outcome.exitCode)"
                + "\(outcome.killed ? ", killed after 10 s" : "")): \(String(decoding: outcome.stderr, as: UTF8.self))")
        }
        return String(decoding: outcome.stdout, as: UTF8.self)
    }
}
