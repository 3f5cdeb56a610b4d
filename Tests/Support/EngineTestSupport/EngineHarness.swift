import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ProxyModel
import Rules
import RulesFile
@testable import ProxyEngine

/// Collects recorded flows in memory.
final class CollectingSink: FlowSink {
    private let box = NIOLockedValueBox<[Flow]>([])
    func record(_ flow: consuming Flow) { box.withLockedValue { $0.append(copy flow) } }
    var flows: [Flow] { box.withLockedValue { $0 } }
}

/// Hands out in-memory upstream channels on the test's event loop, or a scripted failure, and
/// remembers every connect.
final class FakeConnector: UpstreamConnecting, @unchecked Sendable {
    let loop: EmbeddedEventLoop
    var failure: (any Error)?
    var upstreamTimeout: TimeAmount = .seconds(30)
    /// When set, connects stay pending until the test calls `completePendingConnect()`.
    var holdConnects = false
    /// Called with each new upstream channel before the proxy sees it.
    var onNewChannel: ((EmbeddedChannel) -> Void)?
    private var pending: [(EventLoopPromise<(any Channel, UpstreamConnectTimings)>, UpstreamPipelineKind, Int)] = []
    private(set) var connects: [(host: String, port: Int, kind: UpstreamPipelineKind)] = []
    /// The addresses a dns rule gave each connect (nil: resolved normally).
    private(set) var connectAddresses: [[String]?] = []
    private(set) var channels: [EmbeddedChannel] = []

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    func connect(host: String, port: Int, addresses: [String]?, kind: UpstreamPipelineKind, tls: UpstreamTLSSettings?,
                 on eventLoop: any EventLoop) -> EventLoopFuture<(any Channel, UpstreamConnectTimings)>
    {
        connects.append((host, port, kind))
        connectAddresses.append(addresses)
        if let failure {
            return loop.makeFailedFuture(failure)
        }
        if holdConnects {
            let promise = loop.makePromise(of: (any Channel, UpstreamConnectTimings).self)
            pending.append((promise, kind, port))
            return promise.futureResult
        }
        return loop.makeSucceededFuture(makeChannel(kind: kind, port: port))
    }

    /// Completes the oldest held connect with a new in-memory channel, and returns it.
    @discardableResult
    func completePendingConnect() -> EmbeddedChannel {
        let (promise, kind, port) = pending.removeFirst()
        let (channel, timings) = makeChannel(kind: kind, port: port)
        promise.succeed((channel, timings))
        return channel as! EmbeddedChannel
    }

    private func makeChannel(kind: UpstreamPipelineKind, port: Int) -> (any Channel, UpstreamConnectTimings) {
        let channel = EmbeddedChannel(loop: loop)
        if kind == .http {
            try! UpstreamHTTPHandler.installPipeline(on: channel.pipeline.syncOperations, timeout: upstreamTimeout)
        }
        try! channel.pipeline.syncOperations.addHandler(ReadCounter(), position: .first)
        onNewChannel?(channel)
        _ = channel.connect(to: try! SocketAddress(ipAddress: "127.0.0.1", port: port))
        channels.append(channel)
        return (channel, UpstreamConnectTimings(dns: 1.5, connect: 0.5))
    }
}

/// Counts `read()` calls that reach the head of a pipeline: the back-pressure probe.
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny
    private(set) var reads = 0
    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}

/// Runs "blocking" work at once on the caller's loop: an embedded loop must not be completed
/// from a thread pool.
struct InlineWork: BlockingWork {
    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        eventLoop.makeCompletedFuture { try work() }
    }
}

/// Holds "blocking" work until the test releases it, oldest first, so a test can let a file
/// read complete at the worst moment (after the client left, say). Work runs when released, on
/// the test's thread, and completes on the embedded loop.
final class DeferredWork: BlockingWork, @unchecked Sendable {
    private var pending: [() -> Void] = []
    /// How many pieces of work were asked for so far.
    private(set) var requested = 0
    /// How many released pieces stopped at once because their client had gone.
    private(set) var cancelled = 0

    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        requested += 1
        let promise = eventLoop.makePromise(of: T.self)
        pending.append {
            let result = Result { try work() }
            if case .failure(let error) = result, error is WorkCancellation.Cancelled { self.cancelled += 1 }
            promise.completeWith(result)
        }
        return promise.futureResult
    }

    var pendingCount: Int { pending.count }

    /// Runs the oldest held piece of work and completes its future.
    func releaseNext() {
        pending.removeFirst()()
    }
}

/// A client connection to the proxy's real pipeline, in memory: bytes in, bytes out.
final class EngineHarness {
    let loop = EmbeddedEventLoop()
    let client: EmbeddedChannel
    let connector: FakeConnector
    let sink = CollectingSink()
    let clientReads = ReadCounter()
    /// The rules in force; tests swap them to act as a reload.
    let rules: LiveRules
    private let services: ProxyServices

    /// - Parameter rules: rules file text (YAML) to run under; nil for none.
    /// - Parameter blockingWork: where map-local reads and body rewrites run (inline by default).
    init(rules: String? = nil, rulesDirectory: String = "/", blockingWork: any BlockingWork = InlineWork(),
         configure: (inout ProxyConfiguration) -> Void = { _ in }) throws {
        var configuration = ProxyConfiguration()
        configure(&configuration)
        connector = FakeConnector(loop: loop)
        connector.upstreamTimeout = configuration.upstreamTimeout
        self.rules = LiveRules(try rules.map { try RulesFile.parse($0, file: "rules.yml", baseDirectory: rulesDirectory) } ?? .empty)
        let services = ProxyServices(configuration: configuration, sink: sink, connector: connector, rules: self.rules,
                                     blockingWork: blockingWork,
                                     logger: Logger(label: "test"))
        self.services = services
        client = EmbeddedChannel(loop: loop)
        client.remoteAddress = try SocketAddress(ipAddress: "127.0.0.1", port: 50000)
        try ClientPipelineSetup.configure(client, services: services)
        try client.pipeline.syncOperations.addHandler(clientReads, position: .first)
        _ = client.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
    }

    /// Another client connection on the same loop (so the same upstream pool), from `port`.
    func makeClient(port: Int = 50001) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        channel.remoteAddress = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        try ClientPipelineSetup.configure(channel, services: services)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        return channel
    }

    /// Sends bytes as `channel` (another client than the harness's own).
    func send(_ text: String, from channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
        loop.run()
    }

    /// Sends bytes as the client.
    func clientSends(_ text: String) throws {
        try client.writeInbound(ByteBuffer(string: text))
        loop.run()  // handler removals complete on the next loop tick
    }

    /// Everything the proxy wrote to the client so far.
    func clientReceived() throws -> String {
        try Self.drain(client)
    }

    var upstream: EmbeddedChannel? { connector.channels.last }

    /// Sends bytes as the origin on the newest upstream connection.
    func originSends(_ text: String, on channel: EmbeddedChannel? = nil) throws {
        try (channel ?? upstream!).writeInbound(ByteBuffer(string: text))
        loop.run()
    }

    /// Runs one complete `GET http://a.test/1` exchange (empty `200`) and returns its upstream
    /// connection, now idle in the pool, with both sides' bytes drained: the starting point of
    /// every "what happens to a pooled connection" test.
    func pooledConnectionAfterOneExchange() throws -> EmbeddedChannel {
        try clientSends("GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\n")
        try originSends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        _ = try clientReceived()
        guard let first = upstream else { throw EngineHarnessError.noUpstreamConnection }
        _ = try originReceived(on: first)
        return first
    }

    /// Everything the proxy wrote to the origin so far.
    func originReceived(on channel: EmbeddedChannel? = nil) throws -> String {
        try Self.drain(channel ?? upstream!)
    }

    /// What HTTP encoders wrote (`IOData`).
    static func drain(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let data = try channel.readOutbound(as: IOData.self) {
            switch data {
            case .byteBuffer(let buffer): text += String(buffer: buffer)
            case .fileRegion: text += "<file>"
            }
        }
        return text
    }

    /// What a byte relay wrote (`ByteBuffer`).
    static func drainRaw(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += String(buffer: buffer)
        }
        return text
    }
}

/// A harness step that expected the proxy to have opened an upstream connection.
enum EngineHarnessError: Error {
    case noUpstreamConnection
}
