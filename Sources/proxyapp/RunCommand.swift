import ArgumentParser
import CaptureStore
import ControlChannel
import FlowExport
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ProxyCore
import ProxyEngine
import ProxyAppUI
import ProxyModel
import ProxyTLS
import Rules
import RulesFile
import SharedCapture
import TerminalUI

/// `proxyapp run` (the default): starts the proxy and captures every exchange into
/// `<data-dir>/traffic.sqlite` until SIGINT or SIGTERM.
///
/// This is the composition root: it creates the event loops, the resolver's and the blocking
/// pool's threads, the capture writer and the server, and tears them down in order
/// (`ProxyShutdown`) so the last batch reaches the disk.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Start the proxy (the default command).")

    @OptionGroup(title: "Network and access") var network: NetworkAccessOptions

    @OptionGroup(title: "Upstream proxy") var upstream: UpstreamProxyOptions

    @OptionGroup(title: "Reverse mode") var reverseOptions: ReverseOptions

    @OptionGroup var data: DataDirectoryOptions

    @OptionGroup(title: "Keeping captures") var retention: RetentionOptions

    @OptionGroup(title: "Sharing the capture") var store: StoreOptions

    @Option(help: ArgumentHelp("This proxy's name on its flows in a shared --store (default: the host name).",
                               valueName: "name"))
    var name: String?

    @Option(help: "Body bytes stored per request or response; the rest is counted, not kept.")
    var maxBodySize: ByteCount = RunCommand.defaultMaxBodySize

    @Option(help: "Seconds before an idle client connection is closed.")
    var idleTimeout: Int = 60

    @Option(help: "Seconds allowed for opening an upstream connection (then 504).")
    var connectTimeout: Int = 10

    @Option(help: "Seconds an origin may stay silent mid-exchange (then 504).")
    var upstreamTimeout: Int = 60

    @Option(help: "Seconds to wait for a DNS answer (then 504).")
    var dnsTimeout: Int = 5

    @Option(name: .customLong("dns-server"),
            help: ArgumentHelp("A DNS server to ask instead of /etc/resolv.conf's, IP[:PORT]; repeat for more.",
                               valueName: "address"),
            transform: DNSServerArgument.parse)
    var dnsServers: [SocketAddress] = []

    @Option(help: ArgumentHelp(
        "Client connections served at once; one more is answered 503 and closed.",
        discussion: "Default: from the open-file limit L (raised to its hard limit at start), (L - 64) * 4 / 9, "
            + "so every connection can hold its upstream connection too (426 for L = 1024).",
        valueName: "n"))
    var maxConnections: Int?

    @OptionGroup(title: "HTTPS interception") var https: HTTPSOptions

    @OptionGroup(title: "Rules") var rulesOptions: RulesOptions

    @Option(help: ArgumentHelp(
        "Imitate a slow network for every connection: a preset (\(ThrottleSpec.presetNames)) or figures "
            + "(down=1mbit,up=256kbit,latency=100ms; a preset with figures replaced: 3g,latency=300ms).",
        discussion: "A throttle rule in the rules file decides instead for what it matches (README: Throttling).",
        valueName: "spec"),
        transform: { text in
            do { return try ThrottleSpec.parse(text) } catch { throw ValidationError("--throttle: \(error)") }
        })
    var throttle: ThrottleProfile?

    @Option(help: ArgumentHelp(
        "Stop exchanges matching this filter expression at a breakpoint (~q requests, ~s responses; README: Breakpoints).",
        valueName: "EXPR"))
    var intercept: String?

    @Option(help: ArgumentHelp("How long an exchange stays held at a breakpoint before it goes on unchanged (default 5m).",
                               valueName: "DURATION"))
    var interceptTimeout: DurationArgument = DurationArgument(seconds: 300)

    @Flag(help: "Run without the terminal UI (print one line per flow instead). Implied when stdin or stdout is not a terminal.")
    var headless = false

    @Flag(help: "Print nothing per flow.")
    var quiet = false

    /// SQLite refuses a value over 1e9 bytes; far below that, one body per message in memory
    /// stays affordable.
    static let maxBodySizeLimit = 512 << 20

    /// `--max-body-size` of `run` and `import`.
    static let defaultMaxBodySize = ByteCount(bytes: HARReader.defaultMaximumBodySize)

    static func validateMaxBodySize(_ size: ByteCount) throws {
        guard size.bytes <= maxBodySizeLimit else {
            throw ValidationError("--max-body-size must be at most 512MiB (got \(size)).")
        }
    }

    func validate() throws {
        try Self.validateMaxBodySize(maxBodySize)
        if let name {
            try ProxyNameArgument.validate(name)
            guard try store.address() != nil else {
                throw ValidationError("--name names this proxy's flows in a shared store: add --store postgres://…")
            }
        }
        for (name, value) in [("--idle-timeout", idleTimeout), ("--connect-timeout", connectTimeout),
                              ("--upstream-timeout", upstreamTimeout), ("--dns-timeout", dnsTimeout)] where value <= 0 {
            throw ValidationError("\(name) must be a positive number of seconds.")
        }
        if let open = reverseOptions.offLoopback.first, network.allowClients.isEmpty {
            throw ValidationError("--reverse listening on \(open.listen.host) lets other machines reach \(open.origin), and "
                                  + "its clients cannot log in: pass --allow-clients CIDR (e.g. 192.168.1.0/24), or listen "
                                  + "on 127.0.0.1.")
        }
        if reverseOptions.reverseTLS && https.noIntercept {
            throw ValidationError("--reverse-tls presents certificates from the root CA, which --no-intercept turns off: "
                                  + "drop one of them.")
        }
        if let intercept, let problem = BreakpointControl.problem(with: try FilterArgument.parse(intercept, option: "--intercept")) {
            throw ValidationError("--intercept: " + problem)
        }
        guard interceptTimeout.seconds > 0 else { throw ValidationError("--intercept-timeout must be longer than 0s.") }
        if let maxConnections, maxConnections <= 0 || maxConnections > 1 << 30 {
            throw ValidationError("--max-connections must be between 1 and \(1 << 30) (got \(maxConnections)).")
        }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        MemoryTuning.apply()
        let descriptors = DescriptorLimit.raiseSoftToHard()

        let logger = Logger(label: "proxyapp")
        let directory = data.directory
        let tightened = try data.preparePrivateDirectory()
        // Before the CA is loaded: `ca regenerate` refuses while this is held (see RunningProxies).
        let marker = try RunningProxies.mark(dataDirectory: directory)
        defer { marker.release() }
        let database: TrafficDatabase
        let awaitingIndex = TrafficDatabase.flowsAwaitingSearchIndex(path: data.databasePath)
        if awaitingIndex > 0 {
            FileHandle.standardError.write(Data(
                "Indexing the capture's \(awaitingIndex) flows for word search (once, for this version)…\n".utf8))
        }
        do {
            database = try TrafficDatabase(path: data.databasePath)
        } catch {
            let reason = CaptureErrorText.describe(error)
            throw CLIError("cannot open the capture database \(data.databasePath): \(reason). Pass another --data-dir.")
        }
        let withTUI = !headless && isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        let sharedAddress = try store.address()
        var onCommitted: (@Sendable ([Flow]) -> Void)?
        if !quiet && !withTUI {
            let printer = FlowLinePrinter()
            onCommitted = { flows in printer.print(flows) }
        }
        let repository = TrafficRepository(database: database)
        let initialRules = try rulesOptions.loadForRun(data: data)
        let proxyName = name ?? MachineName.current
        let capture = try CaptureParts(local: repository, shared: sharedAddress.map { ($0, proxyName) }, tolerateOutage: true)
        let flowStore = capture.flows
        let https = try self.https.makeSetup(data: data, pins: capture.pins, logger: logger)
        let retentionPolicy = try retention.policy()
        let captureLine = sharedAddress.map { "Capture: \($0.redacted) (shared; this proxy's flows are named \(proxyName))" }
            ?? "Capture: \(data.databasePath)"
        let idleTrim = IdleTrimLoops()  // the event loops are made below, after the writer
        let pageRelease = IdlePageRelease()  // started once the proxy listens
        let writer = CaptureWriter(backend: capture.backend, logger: logger, retention: retentionPolicy, onCommitted: onCommitted,
                                   onIdle: { idleTrim.trim(); pageRelease.captureWentIdle() },
                                   onBacklogWorkedOff: { idleTrim.trim() })

        var configuration = ProxyConfiguration()
        let interfaces = LocalInterfaces.all()
        let listenAddresses = network.bindAddresses(interfaces: interfaces)
        configuration.listenHost = listenAddresses[0].host
        configuration.listenPort = listenAddresses[0].port
        configuration.additionalListenAddresses = listenAddresses.dropFirst().map { .init(host: $0.host, port: $0.port) }
        configuration.access = network.policy(interfaces: interfaces, bound: listenAddresses)
        configuration.maxCapturedBodyBytes = maxBodySize.bytes
        let bodyFiles = database.bodyFiles
        bodyFiles.removeAbandonedSpools()
        configuration.bodySpool = { bodyFiles.makeSpool() }
        configuration.clientIdleTimeout = .seconds(Int64(idleTimeout))
        configuration.connectTimeout = .seconds(Int64(connectTimeout))
        configuration.upstreamTimeout = .seconds(Int64(upstreamTimeout))
        configuration.rootCertificate = https?.rootCertificate
        configuration.maxConnections = maxConnections
        configuration.upstreamProxies = upstream.settings
        configuration.reverse = reverseOptions.mappings
        configuration.throttle = throttle

        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        idleTrim.start(group)
        // DNS has a thread of its own, every lookup in flight at once: a name that never
        // answers delays no other, and lookups never wait behind map-local reads or rewrites.
        let resolver: SystemHostResolver
        do {
            resolver = try SystemHostResolver(configuration: .init(timeout: .seconds(Int64(dnsTimeout)), servers: dnsServers))
        } catch {
            writer.close()
            idleTrim.stop()
            try? await group.shutdownGracefully()
            throw CLIError("cannot start the DNS resolver: \(error). Check /etc/resolv.conf, or pass --dns-server IP.")
        }
        let blockingPool = BlockingPool(numberOfThreads: 4)
        let liveRules = LiveRules(initialRules.rules)
        let rulesWatcher = RulesFileWatcher(path: rulesOptions.path(data: data), live: liveRules,
                                            initialText: initialRules.text) { line in
            // With the TUI these lines go to the log file, which the `E` screen shows: stamp them.
            Console.write((withTUI ? LogTime.now() + " " : "") + TerminalText.escaped(line, keepingLineBreaks: true) + "\n")
        }
        let breakpoints = BreakpointControl(breakpoints: Breakpoints(timeout: .seconds(Int64(interceptTimeout.seconds))))
        _ = breakpoints.setFilter(intercept)  // checked in validate()
        let server = ProxyServer(
            configuration: configuration, sink: writer, group: group,
            resolver: resolver, interception: https?.interception,
            rules: liveRules, blockingPool: blockingPool, logger: logger, breakpoints: breakpoints.breakpoints)

        let address: SocketAddress
        do {
            address = try await server.start()
        } catch {
            resolver.shutdown()
            blockingPool.shutdown()
            writer.close()
            idleTrim.stop()
            try? await group.shutdownGracefully()
            if let failed = error as? ListenError {
                let named = ListenAddress(host: failed.host, port: failed.port)
                throw CLIError(ListenFailure.message(listen: "\(named)", error: failed.underlying))
            }
            throw CLIError(ListenFailure.message(listen: "\(listenAddresses[0])", error: error))
        }
        let boundAll = server.addresses.enumerated().map { index, socket in
            ListenAddress(host: listenAddresses[index].host, port: socket.port ?? listenAddresses[index].port)
        }
        let bound = AccessBanner.localAddress(ListenAddress(host: listenAddresses[0].host,
                                                            port: address.port ?? listenAddresses[0].port))
        marker.update(listen: bound.description)
        // curl reads only the lower-case names (and https_proxy for HTTPS): those are the ones to show.
        var banner = "ProxyApp listening on http://\(bound)  (export http_proxy=http://\(bound) https_proxy=http://\(bound))\n"
        banner += "Data directory: \(directory.path)\n"
        if let tightened { banner += tightened + "\n" }
        banner += TerminalText.escaped(captureLine) + "\n"
        banner += RetentionOptions.bannerLine(retentionPolicy, shared: sharedAddress != nil) + "\n"
        banner += https?.banner ?? "HTTPS: not decrypted (--no-intercept): CONNECT is relayed as opaque tunnels\n"
        if let line = upstream.bannerLine { banner += TerminalText.escaped(line) + "\n" }
        if let throttle {
            banner += "Throttle: \(throttle) for every connection a throttle rule does not decide\n"
        }
        for line in reverseOptions.bannerLines { banner += TerminalText.escaped(line) + "\n" }
        // The rules line is written when the banner is printed: after the TUI quits, it says the
        // rules as they are then, not as they were at start.
        let bannerHead = banner
        banner = descriptors.bannerLine.map { $0 + "\n" } ?? ""
        banner += server.budget.bannerLines
        if boundAll.count > 1 {
            banner += "Listening on " + boundAll.map(\.description).joined(separator: ", ") + "\n"
        }
        let deviceLines = AccessBanner.deviceLines(bound: boundAll, interfaces: interfaces, caPage: https != nil)
        let accessLine = AccessBanner.accessLine(configuration.access, offLoopback: network.listensOffLoopback)
        for line in deviceLines + [accessLine] {
            banner += line + "\n"
        }
        let replayService = FlowReplayService(repository: flowStore, replayer: { server.replayer(ignoresRules: $0) })
        let control = ControlEndpoint.open(dataDirectory: directory.path,
                                           commands: ControlCommands(service: replayService, breakpoints: breakpoints))
        if let intercept {
            banner += "Intercept: \(TerminalText.escaped(intercept)) (held up to \(interceptTimeout); TUI: b, a, A, x)\n"
        }
        banner += control.bannerLine + "\n"
        if !headless && !withTUI {
            banner += "(stdin or stdout is not a terminal: running headless)\n"
        }
        if !quiet && !withTUI {
            banner += FlowTable.header + "\n"
        }
        let rulesPath = rulesOptions.path(data: data)
        let bannerNow = { [banner] in
            bannerHead + TerminalText.escaped(RulesStateText.line(liveRules.status, path: rulesPath)) + "\n" + banner
        }
        let signals = SignalWaiter.install()
        if !withTUI { Console.write(bannerNow()) }  // the TUI's alternate screen would hide it: printed after
        rulesWatcher.start()
        pageRelease.start(activity: {
            let statistics = writer.statistics
            return statistics.flowsWritten &+ statistics.flowsDropped
        })

        if withTUI {
            let logPath = directory.appendingPathComponent("proxyapp.log").path
            let capturePath = sharedAddress.map { "\($0.redacted) (shared)" } ?? data.databasePath
            var startInfo = ProxyInfo(proxy: .thisProcess, listenAddress: bound.description, dataDirectory: directory.path,
                                 capturePath: capturePath, logPath: logPath, caCertificatePath: https?.certificatePath ?? "",
                                 caCreatedNow: https?.createdNow ?? false,
                                 devices: deviceLines.isEmpty ? [] : deviceLines + ["  " + accessLine],
                                 scanTargets: AccessBanner.deviceURLs(bound: boundAll, interfaces: interfaces)
                                    .map { ProxyInfo.ScanTarget(url: $0.url + "/", label: $0.interface) })
            startInfo.keeping = RetentionOptions.summary(retentionPolicy)
            let info = startInfo
            let context = TUIContext(
                listenAddress: bound.description, caURL: https == nil ? "" : "http://\(bound)/ProxyCA.cer",
                rules: { liveRules.status.summary },
                info: {
                    var current = info
                    current.rules = [RulesStateText.line(liveRules.status, path: rulesPath)]
                    return current
                },
                proxyRunning: true, pinTTL: TimeInterval(self.https.pinTTL.seconds), version: ProxyAppCommand.version,
                throttle: { [throttle] in
                    // The flag's profile for everything, and the rules that slow some of it.
                    [throttle.map { $0.preset ?? $0.description }, liveRules.current.throttleSummary]
                        .compactMap { $0 }.joined(separator: " + ")
                },
                replay: { ids in
                    let reply = FlowReplayService.blocking { await replayService.replay(ids: ids, options: .init()) }
                    return TUIActionResult(reply)
                },
                breakpoints: breakpoints.forTUI,
                send: { composed in
                    let request = ReplayRequest(method: composed.method, url: composed.url, headers: composed.headers,
                                                body: composed.body, replayOf: composed.replayOf)
                    return TUIActionResult(FlowReplayService.blocking { await replayService.send(request, ignoresRules: false) })
                })
            let reason = await Self.runTUI(repository: flowStore, context: context, logPath: logPath, signals: signals)
            signals.stopping()
            Console.write(bannerNow())
            Console.write("Stopping (\(reason))…\n")
        } else {
            let signalNumber = await signals.wait()
            signals.stopping()
            Console.write("\nStopping (\(SignalWaiter.name(signalNumber)); again to exit at once)…\n")
        }
        rulesWatcher.stop()
        control.server?.stop()
        // Nothing stays held while the proxy stops: held exchanges go on, for the second they get.
        breakpoints.breakpoints.setFilter(nil, matches: nil)
        breakpoints.breakpoints.acceptAll()
        idleTrim.stop()
        pageRelease.stop()
        await ProxyShutdown(server: server, resolver: resolver, blockingPool: blockingPool, group: group,
                            writer: writer, saveState: { https?.pins.flush() }).run()
        let statistics = writer.statistics
        let lost = statistics.flowsDropped + statistics.flowsFailed
        Console.write("Stored \(statistics.flowsWritten) flow\(statistics.flowsWritten == 1 ? "" : "s") in "
              + TerminalText.escaped(sharedAddress?.redacted ?? data.databasePath)
              + (lost > 0 ? " (\(lost) not stored: dropped under load or while the store failed)" : "") + "\n")
    }
}

extension RunCommand {
    /// Runs the TUI on a thread of its own until the user quits or SIGINT/SIGTERM arrives;
    /// returns which it was. Log output goes to `logPath` meanwhile.
    static func runTUI(repository: any FlowStore, context: TUIContext, logPath: String,
                       signals: SignalWaiter) async -> String {
        let stop = TUIStopSignal()
        let signalled = NIOLockedValueBox<Int32?>(nil)
        Task {
            let number = await signals.wait()
            signalled.withLockedValue { $0 = number }
            stop.request()
        }
        let failure: String? = await withCheckedContinuation { continuation in
            let thread = Thread {
                do {
                    try TerminalUIHost.run(repository: repository, context: context, logPath: logPath, stop: stop,
                                           handlesTerminationSignals: false)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: "\(error)")
                }
            }
            thread.name = "proxyapp-tui"
            thread.start()
        }
        if let failure { Console.write("error: \(failure)\n") }
        switch signalled.withLockedValue({ $0 }) {
        case SIGINT?: return "SIGINT"
        case SIGTERM?: return "SIGTERM"
        default: return "quit from the terminal UI"
        }
    }
}

/// Prints one line per stored flow; called on the capture writer's thread.
final class FlowLinePrinter: Sendable {
    func print(_ flows: [Flow]) {
        var text = ""
        for flow in flows {
            text += FlowTable.line(for: flow)
            text += "\n"
        }
        Console.write(text)
    }
}

/// Unbuffered writes to standard output, so lines from the writer thread and the main task
/// interleave whole and show up at once even when stdout is a pipe.
enum Console {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
