import ArgumentParser
import ControlChannel
import Foundation
import ProxyEngine
import ProxyTLS

/// `proxyapp replay ID…`: sends captured requests again, through the proxy running on the data
/// directory (its control channel), or through an engine of its own with `run`'s settings when
/// none runs. Each replay is captured as a new flow linked to its original (`~replay`).
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Send captured requests again (through the running proxy, or an engine of its own).",
        discussion: """
            Each replay goes through the engine like a client's request: rules apply (unless --no-rules), upstream \
            TLS is verified as configured, and it is captured as a new flow linked to the original (filter ~replay). \
            With a proxy running on the data directory, it sends through that proxy; otherwise it starts the engine \
            itself with the HTTPS, rules and upstream flags given here.
            """)

    @Argument(help: ArgumentHelp("Ids of the flows to send again (`proxyapp flows` lists them), in order.", valueName: "ID"))
    var ids: [Int64] = []

    @Option(help: "Send each flow this many times.")
    var count = 1

    @Option(help: ArgumentHelp("Requests in flight at once (at most \(FlowReplayer.maximumConcurrency)).", valueName: "n"))
    var concurrency = 1

    @Flag(help: "Forward the requests as they are: no rule applies.")
    var noRules = false

    @Flag(help: "Send a request whose body was cut at capture with only the bytes kept.")
    var allowTruncated = false

    @OptionGroup var engine: LocalEngineOptions

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("name at least one flow id (`proxyapp flows` lists them).") }
        guard count >= 1 else { throw ValidationError("--count must be at least 1 (got \(count)).") }
        let most = FlowReplayer.maximumConcurrency
        guard (1...most).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and \(most) (got \(concurrency)).") }
        if let refusal = FlowReplayService.sizeRefusal(ids: ids.count, count: count) {
            throw ValidationError(refusal + ".")
        }
    }

    func run() async throws {
        let request = ControlRequest(command: "replay", ids: ids, count: count, concurrency: concurrency,
                                     noRules: noRules, allowTruncated: allowTruncated)
        let reply = try await LocalEngine.perform(request, options: engine)
        for line in reply.lines { print(line) }
        if !reply.ok { throw CLIError(reply.error ?? "the replay failed") }
    }
}

/// Runs one control command on the proxy of a data directory — through its control channel when
/// one runs, else on a `StandaloneEngine` started for it and stopped after.
enum LocalEngine {
    static func perform(_ request: ControlRequest, options: LocalEngineOptions) async throws -> ControlReply {
        let path = ControlSocket.path(forDataDirectory: options.data.directory.path)
        // With a shared store the engine is always our own: a proxy on the data directory may
        // capture elsewhere, and its flow ids would name other flows.
        let shared = try options.store.address().map { ($0, options.name ?? MachineName.current) }
        if shared == nil, ControlClient.isAnswering(path: path) {
            do {
                return try ControlClient.send(request, path: path)
            } catch {
                throw CLIError("\(error). Is the proxy still running? Try again, or stop it and retry.")
            }
        }
        let engine = try StandaloneEngine.start(data: options.data, https: options.https, rules: options.rules,
                                                upstream: options.upstream, shared: shared)
        let server = engine.server
        let service = FlowReplayService(repository: engine.repository, replayer: { server.replayer(ignoresRules: $0) })
        // The commands block their thread while the engine works: not one of Swift's pool's.
        let reply = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: ControlCommands(service: service).handle(request)) }.start()
        }
        await engine.stop()
        return reply
    }
}

/// The flags of a command that acts through the proxy (`replay`, `send`): the data directory, and
/// `run`'s HTTPS, rules and upstream flags for the engine it starts when no proxy runs there.
struct LocalEngineOptions: ParsableArguments {
    @OptionGroup var data: DataDirectoryOptions

    /// `--store`: read the flows from a shared store and capture there (always with an engine
    /// of this command's own).
    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("With --store: the name the flows sent carry there (default: the host name).",
                               valueName: "name"))
    var name: String?

    func validate() throws {
        if let name { try ProxyNameArgument.validate(name) }
        if name != nil, try store.address() == nil {
            throw ValidationError("--name names this machine's flows in a shared store: add --store URL.")
        }
    }

    @OptionGroup(title: "When no proxy runs: HTTPS") var https: HTTPSOptions

    @OptionGroup(title: "When no proxy runs: rules") var rules: RulesOptions

    @OptionGroup(title: "When no proxy runs: upstream proxy") var upstream: UpstreamProxyOptions
}
