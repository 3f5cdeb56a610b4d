import CaptureStore
import Foundation
import Logging
import NIOCore
import NIOPosix
import ProxyEngine
import ProxyModel
import Rules
import TestSupport

/// The proxy under test, wired the way the CLI wires it: a `ProxyServer` on 127.0.0.1 with an
/// ephemeral port, the system resolver (c-ares on a thread of its own), a blocking pool, and the real `CaptureWriter` and
/// `TrafficRepository` on a SQLite file in a fresh temporary directory.
///
/// Tests read captured flows back from the database, so they check the whole path from the
/// wire to the stored row. `shutdown()` stops the server, the resolver, the blocking pool, the
/// event loops and the writer (in `proxyapp run`'s order), and removes the directory.
final class ProxyHarness: Sendable {
    let port: Int
    let configuration: ProxyConfiguration
    let repository: TrafficRepository
    let writer: CaptureWriter
    /// Scratch space for the test (upload files, curl output); removed on shutdown.
    var directory: URL { scratch.url }
    private let scratch: TemporaryDirectory
    /// Where map-local reads and large rewrites run; a test may fill it with work of its own.
    let blockingPool: BlockingPool
    private let server: ProxyServer
    private let group: MultiThreadedEventLoopGroup
    private let resolver: SystemHostResolver

    private init(port: Int, configuration: ProxyConfiguration, repository: TrafficRepository, writer: CaptureWriter,
                 scratch: TemporaryDirectory, server: ProxyServer, group: MultiThreadedEventLoopGroup, resolver: SystemHostResolver,
                 blockingPool: BlockingPool) {
        self.port = port
        self.configuration = configuration
        self.repository = repository
        self.writer = writer
        self.scratch = scratch
        self.server = server
        self.group = group
        self.resolver = resolver
        self.blockingPool = blockingPool
    }

    /// Starts a proxy; `configure` adjusts the configuration (timeouts, capture cap) after the
    /// listen address has been set to 127.0.0.1:0.
    /// - Parameter interception: builds HTTPS interception over the harness's repository (the
    ///   pin registry lives there); nil keeps CONNECT a byte tunnel.
    /// - Parameter rules: the rules in force; a test swaps them (`replace(with:source:)`) to act
    ///   as a reload of the rules file.
    /// - Parameter threads: event loops; each has its own upstream pool, so tests that need two
    ///   clients to share pooled connections use 1.
    /// - Parameter resolver: the system resolver by default; a test passes one that asks a
    ///   `FakeDNSServer`.
    static func start(interception makeInterception: ((TrafficRepository) throws -> TLSInterception)? = nil,
                      rules: LiveRules = LiveRules(), threads: Int = 2,
                      resolver: SystemHostResolver? = nil, breakpoints: Breakpoints = Breakpoints(),
                      _ configure: (inout ProxyConfiguration) -> Void = { _ in }) async throws -> ProxyHarness {
        let resolver = try resolver ?? SystemHostResolver()
        let scratch = try TemporaryDirectory("proxyapp-e2e")
        let logger = Logger(label: "proxyapp.e2e", factory: { _ in SwiftLogNoOpLogHandler() })
        let repository: TrafficRepository
        do {
            repository = TrafficRepository(
                database: try TrafficDatabase(path: scratch.file("traffic.sqlite")))
        } catch {
            scratch.remove()
            throw error
        }
        let interception: TLSInterception?
        do {
            interception = try makeInterception?(repository)
        } catch {
            scratch.remove()
            throw error
        }
        let writer = CaptureWriter(
            repository: repository, limits: CaptureWriter.Limits(maxBatchDelay: .milliseconds(5)), logger: logger)

        var configuration = ProxyConfiguration()
        configuration.listenHost = "127.0.0.1"
        configuration.listenPort = 0
        let bodyFiles = repository.database.bodyFiles  // large bodies spooled as `proxyapp run` does
        configuration.bodySpool = { bodyFiles.makeSpool() }
        configure(&configuration)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let blockingPool = BlockingPool(numberOfThreads: 1)
        let server = ProxyServer(configuration: configuration, sink: writer, group: group,
                                 resolver: resolver, interception: interception,
                                 rules: rules, blockingPool: blockingPool, logger: logger, breakpoints: breakpoints)
        do {
            let address = try await server.start()
            guard let port = address.port else { throw ChannelError.unknownLocalAddress }
            return ProxyHarness(port: port, configuration: configuration, repository: repository, writer: writer,
                                scratch: scratch, server: server, group: group, resolver: resolver,
                                blockingPool: blockingPool)
        } catch {
            resolver.shutdown()
            blockingPool.shutdown()
            try? await group.shutdownGracefully()
            writer.close()
            scratch.remove()
            throw error
        }
    }

    /// Every address the proxy listens on.
    var listenAddresses: [SocketAddress] { server.addresses }

    /// `http://127.0.0.1:port`, for `curl -x`.
    var proxyURL: String { "http://127.0.0.1:\(port)" }

    /// A path inside the scratch directory.
    func file(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    /// Every stored flow, oldest first, after the writer committed what it had been given.
    func flushedFlows() throws -> [Flow] {
        writer.flush()
        return try repository.latestFlows(limit: 10_000).reversed()
    }

    /// Waits until at least `count` flows are stored (the proxy records some flows, tunnels for
    /// example, only after both connections closed) and returns them, oldest first. Gives up
    /// after `timeout` seconds and returns what is there, so the caller's assertion fails.
    func waitForFlows(count: Int, timeout: TimeInterval = 10) async throws -> [Flow] {
        let deadline = Date().addingTimeInterval(timeout)
        var flows = try flushedFlows()
        var polls = 0
        while flows.count < count && Date() < deadline && polls < 2_000 {
            polls += 1
            try await Task.sleep(nanoseconds: 10_000_000)
            flows = try flushedFlows()
        }
        return flows
    }

    /// What this proxy stops at breakpoints, and what is held.
    var breakpoints: Breakpoints { server.breakpoints }

    /// The engine's replayer (`proxyapp replay`, the TUI's `r`).
    func replayer(ignoresRules: Bool = false) -> FlowReplayer { server.replayer(ignoresRules: ignoresRules) }

    /// The ports of the `--reverse` listeners, in the order of the configuration.
    var reversePorts: [Int] { server.reverseAddresses.compactMap(\.port) }

    func shutdown() async {
        try? await server.stop()
        resolver.shutdown()
        blockingPool.shutdown()
        try? await group.shutdownGracefully()
        writer.close()
        scratch.remove()
    }
}
