import Foundation
import NIOCore
import NIOPosix
import ProxyCore
import ProxyModel
import Rules

/// One SOCKS5 `UDP ASSOCIATE` (RFC 1928 §7): a UDP socket of its own, bound on the address the
/// client reached the proxy at, relaying the client's datagrams (each behind a SOCKS header
/// naming its destination) to their destinations and the answers back behind a header naming
/// their source. Phones send DNS this way.
///
/// - Only datagrams from the control connection's client address are relayed out (from the port
///   it named, or the first it sends from), and only answers from a destination the client sent
///   to are relayed back: nobody else can use the socket or inject into it.
/// - Each destination is decided once: a block rule, or this machine's own services for a
///   client from elsewhere, drops its datagrams (counted, and named in the flow); names are
///   resolved as connections' are (a `dns` rule's addresses first).
/// - Fragments (FRAG ≠ 0) and malformed headers are dropped and counted.
/// - The association ends with its TCP control connection, or after the client idle timeout
///   without a datagram; it is then one flow (method `UDP`, scheme `udp`) with its byte and
///   datagram counts and destinations.
///
/// Everything runs on the control connection's event loop.
final class SOCKSUDPAssociation {
    private let services: ProxyServices
    private let control: any Channel
    private var socket: (any Channel)?
    private var flow: Flow
    private let clientIP: IPAddressBytes
    private var clientPort: Int?
    private let destinationGuard: ClientAccessPolicy?
    private let rules: RuleSet
    private var decisions: [DestinationKey: Decision] = [:]
    /// Where the client sent to: only these may answer.
    private var contacted: Set<SocketAddress> = []
    private var counts = Counts()
    private var timer = DeadlineTimer()
    private var lastActivity = NIODeadline.now()
    private var closed = false

    /// Destinations remembered per association; past it, new ones are dropped.
    static let maximumDestinations = 256
    /// Datagrams held for one destination while its name resolves, and for all of them (each
    /// may pin a 64 KiB receive buffer: at most 4 MiB per association).
    static let maximumHeldPerDestination = 16
    static let maximumHeld = 64
    private var held = 0

    private struct DestinationKey: Hashable {
        var destination: SOCKSDatagram.Destination
        var port: Int
    }

    private enum Decision {
        case resolving(held: [ByteBuffer])
        case send(to: SocketAddress)
        case drop(reason: String)
    }

    private struct Counts {
        var datagramsUp = 0, datagramsDown = 0, dropped = 0
        var bytesUp: Int64 = 0, bytesDown: Int64 = 0
        var destinations: [String] = []
        var dropReasons: [String] = []
    }

    /// Binds the association's socket next to the control connection's local address.
    /// - Parameter clientPort: the port the client said it sends from (nil: unknown yet).
    static func open(services: ProxyServices, control: any Channel, flow: Flow, clientIP: IPAddressBytes,
                     clientPort: Int?, destinationGuard: ClientAccessPolicy?,
                     rules: RuleSet) -> EventLoopFuture<SOCKSUDPAssociation> {
        let association = SOCKSUDPAssociation(services: services, control: control, flow: flow, clientIP: clientIP,
                                              clientPort: clientPort, destinationGuard: destinationGuard, rules: rules)
        // An IPv4 client of a dual-stack listener reached `::ffff:a.b.c.d`: bind (and answer with)
        // a.b.c.d, which an IPv4-only device can send to.
        let bindHost = control.localAddress?.ipAddress.flatMap { IPAddressBytes($0)?.description } ?? "127.0.0.1"
        let loopBound = NIOLoopBound(association, eventLoop: control.eventLoop)
        return DatagramBootstrap(group: control.eventLoop)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SOCKSUDPSocketHandler(association: loopBound.value))
                }
            }
            .bind(host: bindHost, port: 0)
            .map { socket in
                let association = loopBound.value
                association.socket = socket
                association.armTimer()
                return association
            }
    }

    private init(services: ProxyServices, control: any Channel, flow: Flow, clientIP: IPAddressBytes, clientPort: Int?,
                 destinationGuard: ClientAccessPolicy?, rules: RuleSet) {
        self.services = services
        self.control = control
        self.flow = flow
        self.clientIP = clientIP
        self.clientPort = clientPort
        self.destinationGuard = destinationGuard
        self.rules = rules
    }

    /// The socket's address, for the reply's BND.ADDR and BND.PORT.
    var boundAddress: SocketAddress? { socket?.localAddress }

    /// The client was told the relay's address: the flow reads as an open tunnel's does.
    func established() {
        flow.status = 200
        flow.reason = "UDP relay established"
    }

    /// Ends the association (its control connection closed, or it idled out) and records it.
    func close() {
        guard !closed else { return }
        closed = true
        timer.cancel()
        socket?.close(promise: nil)
        control.close(promise: nil)
        flow.finishedAt = Date()
        flow.bytesUp = counts.bytesUp
        flow.bytesDown = counts.bytesDown
        if let first = counts.destinations.first, let colon = first.lastIndex(of: ":") {
            flow.host = String(first[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            flow.port = Int(first[first.index(after: colon)...]) ?? 0
        }
        var note = "UDP relay: \(counts.datagramsUp) datagrams up, \(counts.datagramsDown) down"
        if counts.dropped > 0 {
            note += ", \(counts.dropped) dropped (\(counts.dropReasons.joined(separator: "; ")))"
        }
        if !counts.destinations.isEmpty {
            let shown = counts.destinations.prefix(5).joined(separator: ", ")
            let more = counts.destinations.count > 5 ? " and \(counts.destinations.count - 5) more" : ""
            note += "; to \(shown)\(more)"
        }
        flow.appendNote(note)
        services.sink.record(flow)
    }

    // MARK: datagrams

    fileprivate func received(_ envelope: AddressedEnvelope<ByteBuffer>) {
        guard !closed else { return }
        let source = envelope.remoteAddress
        if let ip = source.ipAddress.flatMap({ IPAddressBytes($0) }), ip == clientIP,
           clientPort == nil || clientPort == source.port {
            clientPort = clientPort ?? source.port
            lastActivity = .now()
            fromClient(envelope.data)
        } else if contacted.contains(source), let clientPort,
                  let client = try? SocketAddress(ipAddress: clientIP.description, port: clientPort),
                  let ip = source.ipAddress.flatMap({ IPAddressBytes($0) }), let port = source.port {
            lastActivity = .now()
            var answer = envelope.data
            counts.datagramsDown += 1
            counts.bytesDown += Int64(answer.readableBytes)
            let header = SOCKSDatagram.header(from: ip, port: port)
            var framed = control.allocator.buffer(capacity: header.count + answer.readableBytes)
            framed.writeBytes(header)
            framed.writeBuffer(&answer)
            socket?.writeAndFlush(AddressedEnvelope(remoteAddress: client, data: framed), promise: nil)
        }
        // Anything else (another host, an answer from somewhere never contacted) is ignored.
    }

    private func fromClient(_ datagram: ByteBuffer) {
        switch SOCKSDatagram.parse(datagram.readableBytesView) {
        case .fragment:
            drop("fragmented datagrams are not reassembled")
        case .invalid(let reason):
            drop("a datagram's SOCKS header: \(reason)")
        case .datagram(let destination, let port, let offset):
            let payload = datagram.getSlice(at: datagram.readerIndex + offset, length: datagram.readableBytes - offset)
                ?? ByteBuffer()
            let key = DestinationKey(destination: destination, port: port)
            if decisions[key] == nil {
                guard decisions.count < Self.maximumDestinations else {
                    return drop("more than \(Self.maximumDestinations) destinations")
                }
                if let decision = decide(key) { decisions[key] = decision }
            }
            switch decisions[key]! {
            case .send(let address):
                send(payload, to: address)
            case .drop(let reason):
                drop(reason)
            case .resolving(var waiting):
                guard waiting.count < Self.maximumHeldPerDestination, held < Self.maximumHeld else {
                    return drop("too many datagrams waiting for DNS")
                }
                held += 1
                waiting.append(payload)
                decisions[key] = .resolving(held: waiting)
            }
        }
    }

    /// The first datagram to a destination decides for all that follow; nil when a name is
    /// being resolved (`decisions` then holds `.resolving`, or already the outcome if the
    /// resolver answered at once).
    private func decide(_ key: DestinationKey) -> Decision? {
        let host: String
        switch key.destination {
        case .address(let address): host = address.description
        case .domain(let name):
            host = HostName.normalized(name)
            guard DNSHostName.isValid(name) else { return .drop(reason: "'\(name.prefix(100))' is not a host name") }
        }
        counts.destinations.append(host.contains(":") ? "[\(host)]:\(key.port)" : "\(host):\(key.port)")
        if !rules.isInert, let block = rules.blockingConnect(host: host, port: key.port) {
            if !flow.appliedRules.contains(block.name) { flow.appliedRules.append(block.name) }
            return .drop(reason: "\(host) blocked by rule '\(block.name)'")
        }
        let dns = rules.dnsOverride(host: host, port: key.port)
        if let dns, let first = dns.action.addresses.first, let address = try? SocketAddress(ipAddress: first, port: key.port) {
            if !flow.appliedRules.contains(dns.name) { flow.appliedRules.append(dns.name) }
            return .send(to: address)
        }
        if case .address(let address) = key.destination {
            if let destinationGuard, destinationGuard.isInternal(address) {
                return .drop(reason: ProxyFailure.internalDestination(host: host, address: address.description).message)
            }
            guard let socketAddress = try? SocketAddress(ipAddress: host, port: key.port) else {
                return .drop(reason: "\(host) is not an address to send to")
            }
            return .send(to: socketAddress)
        }
        decisions[key] = .resolving(held: [])
        services.connector.resolve(host: host, port: key.port, refusingInternal: destinationGuard, on: control.eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                guard !self.closed, case .resolving(let held)? = self.decisions[key] else { return }
                self.held -= held.count
                switch result {
                case .success(let addresses) where !addresses.isEmpty:
                    self.decisions[key] = .send(to: addresses[0])
                    for payload in held { self.send(payload, to: addresses[0]) }
                case .success:
                    self.decisions[key] = .drop(reason: "\(host) has no address")
                    for _ in held { self.drop("\(host) has no address") }
                case .failure(let error):
                    let reason = (error as? ProxyFailure)?.message ?? "cannot resolve \(host)"
                    self.decisions[key] = .drop(reason: reason)
                    for _ in held { self.drop(reason) }
                }
            }
        return nil
    }

    private func send(_ payload: ByteBuffer, to address: SocketAddress) {
        guard let socket else { return }
        if contacted.count < Self.maximumDestinations { contacted.insert(address) }
        counts.datagramsUp += 1
        counts.bytesUp += Int64(payload.readableBytes)
        socket.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: payload), promise: nil)
    }

    private func drop(_ reason: String) {
        counts.dropped += 1
        if counts.dropReasons.count < 3, !counts.dropReasons.contains(reason) { counts.dropReasons.append(reason) }
    }

    private func armTimer() {
        let timeout = services.configuration.clientIdleTimeout
        timer.schedule(at: lastActivity + timeout, on: control.eventLoop) {
            if NIODeadline.now() - self.lastActivity >= timeout { self.close() } else { self.armTimer() }
        }
    }
}

/// The association's UDP socket: every datagram goes to the association.
private final class SOCKSUDPSocketHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let association: SOCKSUDPAssociation

    init(association: SOCKSUDPAssociation) {
        self.association = association
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        association.received(unwrapInboundIn(data))
    }

    /// A send the kernel refused (ICMP unreachable reported on a later call) ends nothing.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}

/// The TCP connection that keeps a UDP association alive: the client has nothing more to say
/// on it (what it sends is read and dropped, so it cannot pile up); when it closes, the
/// association ends.
final class SOCKSUDPControlHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let association: SOCKSUDPAssociation

    init(association: SOCKSUDPAssociation) {
        self.association = association
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    /// Client connections allow half-closure (for tunnels): here the client's end of input is
    /// the end of the association.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        association.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
