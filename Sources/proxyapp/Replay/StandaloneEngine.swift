import CaptureStore
import Foundation
import Logging
import NIOCore
import NIOPosix
import ProxyEngine
import Rules
import SharedCapture

/// The engine `proxyapp replay` and `proxyapp send` start for themselves when no proxy runs on
/// the data directory: the same parts `run` wires (root CA and upstream TLS, rules file,
/// upstream proxy, resolver, capture writer), without a listener. What it sends is captured in
/// the same file, so a proxy started later, or `proxyapp tui`, shows it; with `--store`, it
/// reads the flows from the shared store and captures there, under `--name`.
struct StandaloneEngine {
    let server: ProxyServer
    /// Where the flows to replay are read.
    let repository: any FlowStore
    private let writer: CaptureWriter
    private let group: MultiThreadedEventLoopGroup
    private let resolver: SystemHostResolver
    private let blockingPool: BlockingPool
    private let saveState: () -> Void
    private let marker: RunningProxies.Marker

    /// - Parameter shared: the shared store to read and capture into, and this engine's name there.
    static func start(data: DataDirectoryOptions, https: HTTPSOptions, rules: RulesOptions,
                      upstream: UpstreamProxyOptions,
                      shared: (address: PostgresStoreAddress, name: String)? = nil) throws -> StandaloneEngine {
        signal(SIGPIPE, SIG_IGN)
        let logger = Logger(label: "proxyapp")
        _ = try data.preparePrivateDirectory()
        let marker = try RunningProxies.mark(dataDirectory: data.directory)
        let database: TrafficDatabase
        do {
            database = try TrafficDatabase(path: data.databasePath)
        } catch {
            marker.release()
            let reason = CaptureErrorText.describe(error)
            throw CLIError("cannot open the capture database \(data.databasePath): \(reason). Pass another --data-dir.")
        }
        let loaded: (rules: RuleSet, text: Data?, banner: String)
        let setup: HTTPSOptions.Setup?
        let capture: CaptureParts
        do {
            loaded = try rules.loadForRun(data: data)
            capture = try CaptureParts(local: TrafficRepository(database: database), shared: shared, tolerateOutage: false)
            setup = try https.makeSetup(data: data, pins: capture.pins, logger: logger)
        } catch {
            marker.release()
            throw error
        }
        var configuration = ProxyConfiguration()
        configuration.listenHost = "127.0.0.1"
        configuration.listenPort = 0
        configuration.rootCertificate = setup?.rootCertificate
        configuration.upstreamProxies = upstream.settings
        let group = MultiThreadedEventLoopGroup(numberOfThreads: min(System.coreCount, 2))
        let resolver: SystemHostResolver
        do {
            resolver = try SystemHostResolver(configuration: .init(timeout: .seconds(5), servers: []))
        } catch {
            marker.release()
            try? group.syncShutdownGracefully()
            throw CLIError("cannot start the DNS resolver: \(error). Check /etc/resolv.conf.")
        }
        let writer = CaptureWriter(backend: capture.backend, logger: logger)
        let blockingPool = BlockingPool(numberOfThreads: 2)
        let server = ProxyServer(configuration: configuration, sink: writer, group: group, resolver: resolver,
                                 interception: setup?.interception, rules: LiveRules(loaded.rules),
                                 blockingPool: blockingPool, logger: logger)
        return StandaloneEngine(server: server, repository: capture.flows, writer: writer, group: group, resolver: resolver,
                                blockingPool: blockingPool, saveState: { setup?.pins.flush() }, marker: marker)
    }

    /// Stops the engine; every flow sent is committed before this returns.
    func stop() async {
        await ProxyShutdown(server: server, resolver: resolver, blockingPool: blockingPool, group: group,
                            writer: writer, saveState: saveState).run()
        marker.release()
    }
}
