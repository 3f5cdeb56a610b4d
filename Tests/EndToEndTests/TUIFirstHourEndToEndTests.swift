import Foundation
import XCTest

/// A newcomer's first minutes in the terminal UI, in a real 80×24 terminal (tmux): the empty
/// list says how to send traffic; `i` and `E` show the proxy's state and log; the header leads
/// to the log when a rules reload fails; the banner printed after quitting has the rules as they
/// are then; and HTTPS flows list their paths and ids at 80 columns (and more at 200×50).
///
/// Every wait polls the pane for at most a few seconds and fails with the last screen.
final class TUIFirstHourEndToEndTests: XCTestCase {
    private struct Setup {
        var tmux: String
        var proxyapp: String
        var scratch: URL
        var data: URL
    }

    private func setUp(_ name: String) throws -> Setup {
        guard let tmux = TmuxSession.installedExecutable() else {
            throw XCTSkip("tmux is not installed: this test drives the TUI in a tmux pane (scripts/test installs it)")
        }
        // Not TemporaryDirectory: its 36-character UUID wraps the data paths on the 80×24 info screen, pushing lines off it.
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-\(name)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        let data = scratch.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: scratch) }
        return Setup(tmux: tmux, proxyapp: try proxyAppExecutable(), scratch: scratch, data: data)
    }

    /// `proxyapp run` with its TUI on a fresh data directory.
    func testFirstStartEmptyListInfoEventLogAndBannerAfterQuitting() async throws {
        let setup = try setUp("tui-first-start")
        let command = "TERM=xterm-256color '\(setup.proxyapp)' run --listen 127.0.0.1:0 --data-dir '\(setup.data.path)'; echo TUI-EXITED $?; sleep 30"
        let terminal = try await TmuxSession.start(executable: setup.tmux, socket: setup.scratch.appendingPathComponent("tmux.sock").path,
                                                   width: 80, height: 24, command: command)
        do {
            try await exerciseFirstStart(terminal, data: setup.data)
        } catch {
            await terminal.kill()
            throw error
        }
        await terminal.kill()
    }

    private func exerciseFirstStart(_ terminal: TmuxSession, data: URL) async throws {
        // The empty list: how to send traffic (with the real address), the CA page, the rules.
        let empty = try await terminal.waitForScreen("the empty list with its instructions") { screen in
            screen.contains("No flows yet") && screen.contains("curl -x http://127.0.0.1:") && screen.contains("https_proxy=http://127.0.0.1:")
        }
        let port = try XCTUnwrap(Self.port(in: empty), "no listen address in the header:\n\(empty)")
        XCTAssertTrue(empty.contains("(created now: no client trusts it"), empty)
        XCTAssertTrue(empty.contains("http://proxyapp.cert/"), empty)
        XCTAssertTrue(empty.contains("Rules: none (create"), empty)

        // i: the same, plus the files.
        try await terminal.press("i")
        let info = try await terminal.waitForScreen("the info screen") { $0.hasPrefix("ProxyApp  info") }
        XCTAssertTrue(info.contains("listening on 127.0.0.1:\(port) (this process"), info)
        XCTAssertTrue(info.contains("http://127.0.0.1:\(port)/ProxyCA.cer"), info)
        XCTAssertTrue(info.contains("data/proxyapp.log"), info)
        try await terminal.press("q")
        try await terminal.waitForScreen("the list again") { $0.contains("No flows yet") }

        // A broken rules file: the header says so and leads to the log.
        let rulesFile = data.appendingPathComponent("rules.yml")
        try Data("rules:\n  - name: third\n    match: { hots: x.test }\n    block: {}\n".utf8).write(to: rulesFile)
        try await terminal.waitForScreen("`reload failed (E: log)` in the header") { Self.lines($0).first?.contains("reload failed (E: log)") == true }
        try await terminal.press("E")
        let log = try await terminal.waitForScreen("the event log with the failed reload") { screen in
            screen.hasPrefix("ProxyApp  event log  ") && screen.contains("not reloaded")
        }
        XCTAssertTrue(log.contains("proxyapp: terminal UI started"), log)
        XCTAssertTrue(Self.lines(log).last?.hasPrefix("end (") == true, "the log opens at its end:\n\(log)")
        try await terminal.press("q")

        // Fixed: the header and `i` say so at once.
        try Data("rules:\n  - name: gone\n    match: { host: gone.test }\n    block: { status: 410 }\n".utf8).write(to: rulesFile)
        try await terminal.waitForScreen("`rules: 1 active` in the header") { Self.lines($0).first?.hasSuffix("rules: 1 active") == true }
        try await terminal.press("i")
        try await terminal.waitForText("Rules: 1 active from \(rulesFile.path.prefix(40))")
        try await terminal.press("q")

        // Quit: the banner printed now says the rules as they are now.
        try await terminal.press("q")
        try await terminal.waitForText("Quit? This stops the proxy.")
        try await terminal.press("y")
        let after = try await terminal.waitForText("TUI-EXITED")
        XCTAssertTrue(Self.lines(after).contains("TUI-EXITED 0"), after)
        XCTAssertTrue(after.contains("Rules: 1 active from"), "the banner after quitting is current:\n\(after)")
        XCTAssertFalse(after.contains("Rules: none"), "no stale banner from the start:\n\(after)")
        XCTAssertTrue(after.contains("ProxyApp listening on http://127.0.0.1:\(port)"), after)
    }

    /// HTTPS flows through a headless proxy, read by `proxyapp tui` at 80×24: each row shows its
    /// id and its path (not the scheme and host again); the status line has the whole URL; the
    /// detail title has the id. At 200×50 TIME and TYPE come back.
    func testHTTPSFlowsAt80ColumnsShowPathsAndIDs() async throws {
        let setup = try setUp("tui-https-list")
        let origin = try await TestOrigin.start(tls: try TLSFixtures.untrustedOriginContext(for: "localhost"))
        let proxy = try await ProxyAppProcess.startHeadless(executable: setup.proxyapp, dataDirectory: setup.data,
                                                            arguments: ["--insecure-upstream"])
        var terminal: TmuxSession?
        do {
            let certificate = setup.data.appendingPathComponent("ca/ProxyCA.pem").path
            let paths = ["/echo/users?page=2", "/echo/orders/42", "/echo/static/app.js", "/echo/login", "/echo/search?q=tui"]
            for path in paths {
                let fetched = try await Curl.fetch(viaProxy: proxy.port, "https://localhost:\(origin.port)\(path)", ["--cacert", certificate])
                XCTAssertEqual(fetched.status, 200, "\(path): \(fetched.result.summary)\n\(proxy.output)")
            }
            let command = "TERM=xterm-256color '\(setup.proxyapp)' tui --data-dir '\(setup.data.path)'; echo TUI-EXITED $?; sleep 30"
            let session = try await TmuxSession.start(executable: setup.tmux, socket: setup.scratch.appendingPathComponent("tmux.sock").path,
                                                      width: 80, height: 24, command: command)
            terminal = session
            let screen = try await session.waitForScreen("five HTTPS rows") { Self.rows($0).count == 5 }
            let rows = Self.rows(screen)
            XCTAssertEqual(rows.map(\.id), ["1", "2", "3", "4", "5"], screen)
            XCTAssertEqual(rows.map(\.path), paths, "PATH is path and query only:\n\(screen)")
            XCTAssertFalse(Self.lines(screen).dropLast().contains { $0.contains("https://") }, "no URL repeated in the rows:\n\(screen)")
            XCTAssertTrue(Self.lines(screen)[1].hasPrefix("ID    METHOD  STATUS HOST"), "TIME gave way at 80 columns:\n\(screen)")
            XCTAssertEqual(Self.lines(screen).dropFirst(2).prefix(5).filter { $0.contains(" h2 GET ") }.count, 5,
                           "curl spoke HTTP/2 to the proxy, and the protocol column says so:\n\(screen)")
            XCTAssertTrue(Self.lines(screen).last?.hasPrefix("following  https://localhost:\(origin.port)/echo/search?q=tui") == true,
                          "the selected flow's URL on the status line:\n\(screen)")

            try await session.press("k")
            try await session.waitForScreen("the URL of the row above") { Self.lines($0).last?.contains("/echo/login") == true }
            try await session.press("Enter")
            try await session.waitForScreen("the detail view titled with the id") { Self.lines($0).first?.hasPrefix("#4  GET https://localhost:") == true }
            try await session.press("q")

            try await session.resize(width: 200, height: 50)
            let wide = try await session.waitForScreen("the list at 200×50") { screen in
                Self.lines(screen).count > 1 && Self.lines(screen)[1].contains("TIME") && Self.lines(screen)[1].contains("TYPE")
            }
            XCTAssertEqual(Self.rows(wide).map(\.path), paths, wide)
            try await session.press("q")
            try await session.waitForText("TUI-EXITED 0")
        } catch {
            await terminal?.kill()
            await proxy.stop()
            await origin.shutdown()
            throw error
        }
        await terminal?.kill()
        await proxy.stop()
        await origin.shutdown()
    }

    // MARK: reading the screen

    private static func lines(_ screen: String) -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }.reversed().drop { $0.isEmpty }.reversed()
    }

    /// The flow rows: id (the first word) and path (the word starting `/echo/`).
    private static func rows(_ screen: String) -> [(id: String, path: String)] {
        lines(screen).dropFirst(2).compactMap { line in
            let words = line.split(separator: " ")
            guard let id = words.first, Int(id) != nil, let path = words.first(where: { $0.hasPrefix("/echo/") }) else { return nil }
            return (String(id), String(path))
        }
    }

    /// The port of `listening 127.0.0.1:PORT` in the header.
    private static func port(in screen: String) -> Int? {
        guard let range = screen.range(of: "listening 127.0.0.1:") else { return nil }
        return Int(screen[range.upperBound...].prefix { $0.isNumber })
    }
}
