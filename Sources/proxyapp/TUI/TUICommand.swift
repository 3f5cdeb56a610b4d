import ArgumentParser
import CaptureStore
import ControlChannel
import Foundation
import NIOConcurrencyHelpers
import ProxyAppUI
import ProxyModel
import RequestComposer
import SharedCapture
import TerminalUI

/// `proxyapp tui`: the terminal UI alone, on a capture another process may be writing (a
/// headless proxy) or an old one. Nothing is proxied.
struct TUICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "Browse a capture in the terminal UI without running the proxy.",
        discussion: """
            proxyapp tui                       # the capture of the data directory
            proxyapp tui --db old.sqlite       # any capture file
            proxyapp tui --read-only           # no marking, deleting or clearing
            proxyapp tui --store postgres://qa:secret@db:5432/proxyapp
                                               # a team's shared capture, every proxy's flows
            """)

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The capture database to open (default: <data-dir>/traffic.sqlite).", valueName: "FILE"))
    var db: String?

    @Flag(help: "Open the capture read-only: marks, deletes and clearing are refused.")
    var readOnly = false

    @Option(name: .customLong("pin-ttl"), help: "How long pins last, for the expiry dates the pins view shows.")
    var pinTTL: DurationArgument = PinsCommand.defaultPinTTL

    func validate() throws {
        // Only `--store` as typed: the environment's `PROXYAPP_STORE` yields to `--db`.
        if db != nil, store.storeText != nil {
            throw ValidationError("--db and --store name two captures: give one.")
        }
    }

    /// The TUI's loop runs on a thread of its own: it blocks for as long as the user looks, and
    /// on a thread of Swift's cooperative pool (two threads on a 2-core machine) it would leave
    /// too few for the work it starts (a replay's engine, its shutdown).
    func run() async throws {
        nonisolated(unsafe) let command = self
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                do {
                    try command.runInTerminal()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "proxyapp-tui"
            thread.start()
        }
    }

    /// Opens the capture and runs the TUI until the user quits (blocking).
    func runInTerminal() throws {
        if db == nil, let address = try store.address() {
            return try runShared(address)
        }
        let path = db.map { ($0 as NSString).expandingTildeInPath } ?? data.databasePath
        if db == nil, FileManager.default.fileExists(atPath: path), let tightened = try data.preparePrivateDirectory() {
            StandardError.print(tightened)
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("no capture database at \(path). Start the proxy with `proxyapp run` first, or pass --db FILE.")
        }
        let writable = !readOnly && FileManager.default.isWritableFile(atPath: path)
        let database: TrafficDatabase
        do {
            database = writable ? try TrafficDatabase(path: path) : try TrafficDatabase.openReadOnly(path: path)
        } catch {
            throw CLIError("cannot open the capture \(path): \(CaptureErrorText.describe(error))")
        }
        // Log lines (and a crash report) go beside the capture, if that directory takes them.
        let logPath = ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("proxyapp.log")
        let data = db == nil ? data : nil
        let watch = ProxyInfoWatch { Self.info(data: data, capturePath: path, logPath: logPath) }
        defer { watch.stop() }
        // With the data directory's capture, `r` replays through the proxy running on it (its
        // control channel), found when asked: the proxy may start after the TUI.
        let controlPath = data.map { ControlSocket.path(forDataDirectory: $0.directory.path) }
        var replay: (@Sendable ([Int64]) -> TUIActionResult)?
        if let controlPath {
            replay = { ids in Self.replay(ids, controlPath: controlPath) }
        }
        let breakpoints = controlPath.map(Self.attachedBreakpoints)
        let context = TUIContext(rules: { "" }, info: { watch.latest }, readOnly: !writable, pinTTL: TimeInterval(pinTTL.seconds),
                                 version: ProxyAppCommand.version, replay: replay, breakpoints: breakpoints?.breakpoints,
                                 send: controlPath.map(Self.attachedSend))
        // Quitting releases what is held, and clears a filter this TUI set: nothing waits for a
        // person who left.
        defer { breakpoints?.release() }
        try TerminalUIHost.run(repository: TrafficRepository(database: database), context: context, logPath: logPath)
    }
}

extension TUICommand {
    /// The TUI on a shared PostgreSQL capture: every proxy's flows, tailed live. Replay and send
    /// run on an engine of this process's own; breakpoints need a running proxy, so there are
    /// none here.
    private func runShared(_ address: PostgresStoreAddress) throws {
        let session = try StoreOptions.openSession(address)
        // Log lines go into the data directory, as for the local capture, when it takes them.
        var logPath: String? = data.directory.appendingPathComponent("proxyapp.log").path
        do {
            if let tightened = try data.preparePrivateDirectory() { StandardError.print(tightened) }
        } catch {
            StandardError.print("Note: \(error) Log lines are dropped.")
            logPath = nil
        }
        let capture = address.redacted
        let shownLog = logPath ?? ""
        // `r` and `R` start an engine of this process's own for each action, as `proxyapp replay
        // --store` does: it reads the flow here and captures the answer here.
        var engine = try LocalEngineOptions.parse([])
        engine.data = data
        engine.store = store
        let options = engine
        let context = TUIContext(rules: { "" }, info: { ProxyInfo(capturePath: "\(capture) (shared)", logPath: shownLog) },
                                 readOnly: readOnly, pinTTL: TimeInterval(pinTTL.seconds), version: ProxyAppCommand.version,
                                 replay: { ids in Self.perform(ControlRequest(command: "replay", ids: ids), options) },
                                 send: { composed in
                                     var message = ControlHTTPRequest(method: composed.method, url: composed.url,
                                                                      headers: composed.headers.map { ($0.name, $0.value) },
                                                                      body: composed.body)
                                     message.replayOf = composed.replayOf
                                     return Self.perform(ControlRequest(command: "send", request: message), options)
                                 })
        try TerminalUIHost.run(repository: PostgresFlowStore(session: session), context: context, logPath: logPath)
    }

    /// `request` on an engine of this process's own (`LocalEngine`), blocking the TUI worker
    /// lane that asked.
    private static func perform(_ request: ControlRequest, _ options: LocalEngineOptions) -> TUIActionResult {
        FlowReplayService.blocking {
            do {
                return TUIActionResult(try await LocalEngine.perform(request, options: options))
            } catch {
                return TUIActionResult(ok: false, message: "\(error)")
            }
        }
    }

    /// Breakpoints of the proxy on the data directory, through its control channel (asked when
    /// used: the proxy may start after the TUI, or stop); `release` is for quitting.
    static func attachedBreakpoints(controlPath: String) -> (breakpoints: TUIBreakpoints, release: @Sendable () -> Void) {
        let filterSet = NIOLockedValueBox(false)
        @Sendable func ask(_ request: ControlRequest) -> ControlReply? {
            guard ControlClient.isAnswering(path: controlPath) else { return nil }
            return try? ControlClient.send(request, path: controlPath, timeoutSeconds: 10)
        }
        /// nil when the proxy took the edit, else its reason (or that no proxy answered).
        @Sendable func refusal(_ reply: ControlReply?) -> String? {
            guard let reply else { return "no proxy runs on this data directory any more" }
            return reply.ok ? nil : reply.error ?? "the proxy refused the edit"
        }
        let breakpoints = TUIBreakpoints(
            state: {
                guard let reply = ask(ControlRequest(command: "holds")), reply.ok else { return nil }
                return TUIBreakpoints.State(filter: reply.filter, held: reply.held ?? [])
            },
            setFilter: { text in
                guard let reply = ask(ControlRequest(command: "intercept", filter: text ?? "")) else {
                    return "no proxy runs on this data directory: start one (proxyapp run) to set breakpoints"
                }
                if reply.ok { filterSet.withLockedValue { $0 = true } }
                return reply.ok ? nil : reply.error
            },
            decide: { id, accept in
                ask(ControlRequest(command: accept ? "accept" : "kill", ids: [Int64(id)]))?.lines.first?.hasSuffix(" 1") == true
            },
            acceptAll: {
                Int(ask(ControlRequest(command: "accept"))?.lines.first?.split(separator: " ").last ?? "") ?? 0
            },
            heldRequest: { id in
                guard let held = ask(ControlRequest(command: "held", ids: [Int64(id)]))?.heldRequest, let body = held.bodyBytes else {
                    return nil
                }
                return TUIComposedRequest(method: held.method, url: held.url,
                                          headers: held.headerPairs.map { HeaderField(name: $0.0, value: $0.1) }, body: body, replayOf: nil)
            },
            edit: { id, request in
                let message = ControlHTTPRequest(method: request.method, url: request.url,
                                                 headers: request.headers.map { ($0.name, $0.value) }, body: request.body)
                return refusal(ask(ControlRequest(command: "edit", ids: [Int64(id)], request: message)))
            },
            heldResponse: { id in
                guard let held = ask(ControlRequest(command: "held", ids: [Int64(id)]))?.heldResponse, let body = held.bodyBytes else {
                    return nil
                }
                return ComposedResponse(status: held.status, reason: held.reason,
                                        headers: held.headerPairs.map { HeaderField(name: $0.0, value: $0.1) }, body: body)
            },
            editResponse: { id, response in
                let message = ControlHTTPResponse(status: response.status, reason: response.reason,
                                                  headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
                return refusal(ask(ControlRequest(command: "edit", ids: [Int64(id)], response: message)))
            })
        let release: @Sendable () -> Void = {
            if filterSet.withLockedValue({ $0 }) { _ = ask(ControlRequest(command: "intercept", filter: "")) }
            _ = ask(ControlRequest(command: "accept"))
        }
        return (breakpoints, release)
    }

    /// `R` in an attached TUI: the edited request sent through the proxy on the data directory.
    static func attachedSend(controlPath: String) -> @Sendable (TUIComposedRequest) -> TUIActionResult {
        { composed in
            guard ControlClient.isAnswering(path: controlPath) else {
                return TUIActionResult(ok: false, message: "no proxy runs on this data directory: start one (proxyapp run) to send")
            }
            var message = ControlHTTPRequest(method: composed.method, url: composed.url,
                                             headers: composed.headers.map { ($0.name, $0.value) }, body: composed.body)
            message.replayOf = composed.replayOf
            do {
                return TUIActionResult(try ControlClient.send(ControlRequest(command: "send", request: message), path: controlPath))
            } catch {
                return TUIActionResult(ok: false, message: "\(error)")
            }
        }
    }

    /// `r` in an attached TUI: the replay asked of the proxy running on the data directory.
    static func replay(_ ids: [Int64], controlPath: String) -> TUIActionResult {
        guard ControlClient.isAnswering(path: controlPath) else {
            return TUIActionResult(ok: false, message: "no proxy runs on this data directory: start one (proxyapp run) "
                                   + "to replay, or use proxyapp replay ID")
        }
        do {
            return TUIActionResult(try ControlClient.send(ControlRequest(command: "replay", ids: ids), path: controlPath))
        } catch {
            return TUIActionResult(ok: false, message: "\(error)")
        }
    }

    /// What the `i` screen says: a proxy running on the data directory (found by its marker) and
    /// the data directory's CA; `data` is nil for a capture opened by `--db`. Reads files: call it
    /// off the UI thread (`ProxyInfoWatch`).
    static func info(data: DataDirectoryOptions?, capturePath: String, logPath: String) -> ProxyInfo {
        var info = ProxyInfo(capturePath: capturePath, logPath: logPath)
        guard let data else { return info }
        info.dataDirectory = data.directory.path
        if let running = RunningProxies.running(in: data.directory).first {
            info.proxy = .otherProcess(pid: running.pid)
            info.listenAddress = running.listen
        }
        let certificate = data.certificateAuthorityStore.certificatePEMPath
        if FileManager.default.fileExists(atPath: certificate) { info.caCertificatePath = certificate }
        return info
    }
}

/// The time at the start of a line the proxy writes to its log, as swift-log's stream handler
/// writes it (`2026-11-25T17:05:43+0000`), so the `E` screen's lines read alike.
enum LogTime {
    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [Int8](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Starts the TUI on this terminal, runs it until the user quits (or `stop` is requested), and
/// puts the terminal back. While it runs, stdout and stderr go to `logPath` (or nowhere), so a
/// log line or a stray print can never scribble over the screen.
enum TerminalUIHost {
    static func run(repository: any FlowStore, context: TUIContext, logPath: String? = nil,
                    stop: TUIStopSignal = TUIStopSignal(), handlesTerminationSignals: Bool = true) throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw CLIError("the terminal UI needs a terminal on stdin and stdout. Run it in a terminal, or use `proxyapp run --headless` / `proxyapp flows`.")
        }
        let terminal = dup(STDOUT_FILENO)
        guard terminal >= 0 else { throw CLIError("cannot duplicate stdout: \(String(cString: strerror(errno))).") }
        let session: TerminalSession
        do {
            session = try TerminalSession(input: STDIN_FILENO, output: terminal, restoreOnTermination: handlesTerminationSignals)
        } catch {
            close(terminal)
            throw CLIError("\(error)")
        }
        let redirect = OutputRedirect(to: logPath ?? "/dev/null")
        // Where this session's lines start in a log kept across runs.
        FileHandle.standardError.write(Data("\(LogTime.now()) proxyapp: terminal UI started (\(context.info().proxy == .thisProcess ? "with the proxy" : "reading the capture"))\n".utf8))
        let feed = FlowListFeed(repository: repository, timeZone: context.timeZone)
        feed.start()
        let controller = TUIController(repository: repository, feed: feed, context: context)
        TUIRunner.run(controller, session: session, stop: stop)
        feed.stop()
        session.restore()
        redirect.undo()
        close(terminal)
        if controller.hasPendingWork {
            FileHandle.standardError.write(Data("proxyapp: finishing an export or change that was still running…\n".utf8))
            controller.finishPendingWork()
        }
    }
}

/// Points stdout and stderr at a file for a while, and back (internal for its tests).
struct OutputRedirect {
    private var saved: [(Int32, Int32)] = []

    init(to path: String) {
        // Private: log lines may quote traffic. Never through a symlink, never into a file of
        // another user (`tui --db` may point into a shared folder where one was planted).
        var file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o600)
        var info = stat()
        if file >= 0, fstat(file, &info) != 0 || info.st_uid != geteuid() {
            close(file)
            file = -1
        }
        if file < 0 { file = open("/dev/null", O_WRONLY | O_CLOEXEC) }  // never onto the screen
        guard file >= 0 else { return }
        for descriptor in [STDOUT_FILENO, STDERR_FILENO] {
            let copy = dup(descriptor)
            if copy >= 0, dup2(file, descriptor) >= 0 { saved.append((descriptor, copy)) }
        }
        close(file)
    }

    func undo() {
        for (descriptor, copy) in saved {
            dup2(copy, descriptor)
            close(copy)
        }
    }
}
