import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A DNS server on 127.0.0.1 UDP for tests: the test decides per name whether it answers
/// addresses, an error code, later, only when released, or never (a server that does not
/// answer, as on a dead network), and reads back which queries came.
///
/// Give its `address` to `SystemHostResolver.Configuration.servers` or `--dns-server`.
public final class FakeDNSServer: Sendable {
    /// What the server does with a query for a name.
    public enum Reply: Sendable {
        /// These addresses (IPv4 for A, IPv6 for AAAA queries; none of the type is NODATA).
        case addresses([String])
        /// An error code: 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED.
        case failure(rcode: UInt8)
        /// Nothing, ever.
        case silence
        /// Nothing until `release(_:with:)`.
        case hold
        /// The reply after a delay.
        indirect case after(TimeAmount, Reply)
    }

    private struct State {
        var queries: [(name: String, type: UInt16, port: Int)] = []
        var held: [(query: DNSMessage.Query, from: SocketAddress)] = []
        /// Names released from `.hold`, and their reply for queries still to come.
        var released: [String: Reply] = [:]
    }

    /// Where the server listens (127.0.0.1, an ephemeral port).
    public let address: SocketAddress
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let state: NIOLockedValueBox<State>

    private init(address: SocketAddress, channel: any Channel, group: MultiThreadedEventLoopGroup,
                 state: NIOLockedValueBox<State>) {
        self.address = address
        self.channel = channel
        self.group = group
        self.state = state
    }

    /// `ip:port`, as `--dns-server` takes it.
    public var argument: String { "127.0.0.1:\(address.port ?? 0)" }

    /// Starts a server that treats each query's name (lower case, no trailing dot) as `reply` says.
    public static func start(_ reply: @escaping @Sendable (String) -> Reply) async throws -> FakeDNSServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = NIOLockedValueBox(State())
        do {
            let channel = try await DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Handler(reply: reply, state: state))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            guard let address = channel.localAddress else { throw ChannelError.unknownLocalAddress }
            return FakeDNSServer(address: address, channel: channel, group: group, state: state)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// How many queries (A and AAAA, retries included) came for `name`.
    public func queryCount(_ name: String) -> Int {
        state.withLockedValue { $0.queries.filter { $0.name == name }.count }
    }

    /// The source ports queries for names matching `filter` came from.
    public func sourcePorts(where filter: (String) -> Bool) -> Set<Int> {
        state.withLockedValue { Set($0.queries.filter { filter($0.name) }.map(\.port)) }
    }

    /// Every name asked for so far.
    public var queriedNames: Set<String> {
        state.withLockedValue { Set($0.queries.map(\.name)) }
    }

    /// Waits (at most `timeout` seconds) until every one of `names` was asked for, as it is or
    /// with a search domain of the machine's resolv.conf after it (a resolver may try those
    /// first, and never get to the name itself when the server stays silent).
    public func waitUntilQueried(_ names: some Sequence<String>, timeout: TimeInterval = 10) async -> Bool {
        let wanted = Set(names)
        let deadline = Date().addingTimeInterval(timeout)
        func allAsked() -> Bool {
            let asked = queriedNames
            return wanted.allSatisfy { name in asked.contains { $0 == name || $0.hasPrefix(name + ".") } }
        }
        while Date() < deadline {
            if allAsked() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return allAsked()
    }

    /// Answers the held queries for `name` with `reply`, and any that come later.
    public func release(_ name: String, with reply: Reply) {
        let released = state.withLockedValue { state in
            state.released[name] = reply
            defer { state.held.removeAll { $0.query.name == name } }
            return state.held.filter { $0.query.name == name }
        }
        for (query, from) in released {
            Handler.send(reply, to: query, from: from, on: channel, state: state)
        }
    }

    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    /// Reads queries, records them and replies as the test said.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        private let reply: @Sendable (String) -> Reply
        private let state: NIOLockedValueBox<State>

        init(reply: @escaping @Sendable (String) -> Reply, state: NIOLockedValueBox<State>) {
            self.reply = reply
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            guard let query = DNSMessage.parseQuery(envelope.data) else { return }
            let released = state.withLockedValue { state in
                state.queries.append((query.name, query.type, envelope.remoteAddress.port ?? 0))
                return state.released[query.name]
            }
            Self.send(released ?? reply(query.name), to: query, from: envelope.remoteAddress, on: context.channel,
                      state: state)
        }

        static func send(_ reply: Reply, to query: DNSMessage.Query, from client: SocketAddress, on channel: any Channel,
                         state: NIOLockedValueBox<State>) {
            let packet: ByteBuffer
            switch reply {
            case .addresses(let addresses):
                packet = DNSMessage.answer(query, addresses: addresses.compactMap { try? SocketAddress(ipAddress: $0, port: 0) })
            case .failure(let rcode):
                packet = DNSMessage.answer(query, addresses: [], rcode: rcode)
            case .silence:
                return
            case .hold:
                state.withLockedValue { $0.held.append((query, client)) }
                return
            case .after(let delay, let later):
                channel.eventLoop.scheduleTask(in: delay) {
                    send(later, to: query, from: client, on: channel, state: state)
                }
                return
            }
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: client, data: packet), promise: nil)
        }
    }
}
