import Foundation
import NIOCore
import NIOSOCKS
import ProxyCore
import ProxyModel
import Rules

/// Serves a listener connection whose first byte said SOCKS5 (RFC 1928): after NIOSOCKS's
/// `SOCKSServerHandshakeHandler` has read each message, this chooses the method (no login for
/// loopback and `--allow-clients` clients, RFC 1929 username/password with `--auth`), checks the
/// login, and carries out `CONNECT` the way an HTTP CONNECT is carried out:
///
/// - with interception, the reply is "succeeded" at once and the connection goes to an
///   `InterceptedTunnel` (the same first-bytes decision: TLS decrypted, plain HTTP proxied, the
///   rest relayed), as an HTTP CONNECT's `200` does;
/// - without it (or for a host `ssl_proxying` excludes) the target is dialled first, so a failure
///   is the reply code a SOCKS client understands (`0x04` host unreachable, `0x05` refused, `0x06`
///   timed out), then both sides become a byte relay recorded as a tunnel flow.
///
/// A block rule for the target, or this machine's own address asked by a client from elsewhere,
/// is `0x02` (not allowed). `UDP ASSOCIATE` opens a `SOCKSUDPAssociation`; `BIND` is `0x07`
/// (command not supported). Every
/// refusal and failure after the login is a flow with its reason. A handshake that stalls is
/// closed after the client idle timeout.
final class SOCKSFrontHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ClientMessage
    typealias OutboundOut = ServerMessage

    private let services: ProxyServices
    private var loginBytes: [UInt8] = []
    private var user: String?
    private var clientAddress = ""
    private var destinationGuard: ClientAccessPolicy?
    private var timer = DeadlineTimer()
    private var done = false

    init(services: ProxyServices) {
        self.services = services
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if let remote = context.channel.remoteAddress, let ip = remote.ipAddress, let port = remote.port {
            clientAddress = ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
            let access = services.configuration.access
            if access.guardsDestinations(forClient: IPAddressBytes(ip)) { destinationGuard = access }
        }
        let deadline = context.eventLoop.now + services.configuration.clientIdleTimeout
        timer.schedule(at: deadline, on: context.eventLoop) { [weak context] in context?.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // When a closed channel's handlers are removed, NIOSOCKS's handshake handler (before
        // this one) passes on its held bytes as a ByteBuffer, which is not a `ClientMessage`:
        // `done` makes `channelRead` drop them unread.
        done = true
        timer.cancel()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOSOCKS refuses what is not SOCKS5 (a wrong version, a bad address type): nothing
        // more can be said to the client in its protocol than closing. A socket error (a reset)
        // is the client leaving, not a refusal worth a log line.
        if !done, !(error is IOError) {
            services.refusalLog.note("closed a SOCKS connection from \(clientAddress): it did not speak SOCKS5")
        }
        done = true
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .greeting(let greeting):
            chooseMethod(greeting.methods, context: context)
        case .authenticationData(let buffer):
            readLogin(buffer, context: context)
        case .request(let request):
            carryOut(request, context: context)
        }
    }

    // MARK: login

    private func chooseMethod(_ offered: [AuthenticationMethod], context: ChannelHandlerContext) {
        let wanted: AuthenticationMethod = services.configuration.access.requiresAuthentication ? .usernamePassword : .noneRequired
        guard offered.contains(wanted) else {
            services.refusalLog.note("refused SOCKS client \(clientAddress): "
                                     + (wanted == .usernamePassword ? "it offers no username/password login (--auth)"
                                                                   : "it offers only logins this proxy has none for"))
            finish(context, with: .selectedAuthenticationMethod(.init(method: .noneAcceptable)))
            return
        }
        context.writeAndFlush(wrapOutboundOut(.selectedAuthenticationMethod(.init(method: wanted))), promise: nil)
        if wanted == .noneRequired { pokeHandshake(context) }
    }

    /// NIOSOCKS reads what it holds only when more arrives: a client that sent its request with
    /// its greeting (no login to wait for) would stall. An empty read, after this event, makes it
    /// read the request it holds.
    private func pokeHandshake(_ context: ChannelHandlerContext) {
        let channel = context.channel
        context.eventLoop.assumeIsolated().execute {
            guard channel.isActive, (try? channel.pipeline.syncOperations.handler(type: SOCKSServerHandshakeHandler.self)) != nil
            else { return }
            channel.pipeline.fireChannelRead(channel.allocator.buffer(capacity: 0))
        }
    }

    private func readLogin(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        loginBytes += buffer.readableBytesView
        switch SOCKSPasswordRequest.parse(loginBytes) {
        case .incomplete:
            if loginBytes.count > SOCKSPasswordRequest.maximumLength { refuseLogin("the SOCKS5 login is too long", context) }
        case .invalid(let reason):
            refuseLogin(reason, context)
        case .complete(let name, let password, let consumed):
            guard consumed == loginBytes.count else {
                return refuseLogin("the SOCKS5 client sent data before its login was answered", context)
            }
            loginBytes = []
            switch services.configuration.access.credentials.login(name: name, password: password) {
            case .accepted(let user):
                acceptLogin(user, context)
            case .rejected:
                refuseLogin("wrong user name or password (--auth)", context)
            case .needsHashCheck(let login):
                // The client waits for the answer to its login before it sends anything more.
                services.passwordVerifier.verify(login, on: context.eventLoop).assumeIsolated().whenSuccess { verdict in
                    guard context.channel.isActive else { return }
                    switch verdict {
                    case .accepted: self.acceptLogin(login.user, context)
                    case .rejected: self.refuseLogin("wrong user name or password (--auth-file)", context)
                    case .busy: self.refuseLogin("too many logins are being checked at once", context)
                    }
                }
            }
        }
    }

    private func acceptLogin(_ user: String, _ context: ChannelHandlerContext) {
        self.user = user
        let reply = context.channel.allocator.buffer(bytes: SOCKSPasswordRequest.reply(success: true))
        context.writeAndFlush(wrapOutboundOut(.authenticationData(reply, complete: true)), promise: nil)
    }

    private func refuseLogin(_ reason: String, _ context: ChannelHandlerContext) {
        services.refusalLog.note("refused SOCKS client \(clientAddress): \(reason)")
        let reply = context.channel.allocator.buffer(bytes: SOCKSPasswordRequest.reply(success: false))
        finish(context, with: .authenticationData(reply, complete: true))
    }

    // MARK: the request

    private func carryOut(_ request: SOCKSRequest, context: ChannelHandlerContext) {
        timer.cancel()
        var host: String
        let port: Int
        switch request.addressType {
        case .address(let address):
            host = address.ipAddress ?? "?"
            port = address.port ?? 0
        case .domain(let name, let port_):
            host = name
            port = port_
        }
        var flow = Flow(kind: .tunnel, clientAddress: clientAddress, startedAt: Date(), method: "CONNECT", scheme: "tcp",
                        host: host, port: port, path: "", httpVersion: "SOCKS/5", requestHeaders: [])
        if let user { flow.note = "SOCKS5, logged in as \(user)" }
        if request.command == .udpAssociate {
            return associate(flow, clientPort: port, context: context)
        }
        guard request.command == .connect else {
            let name = request.command == .bind ? "BIND" : "command \(request.command.value)"
            return refuse(flow, reply: .commandUnsupported,
                          reason: "SOCKS5 \(name) is not supported (only CONNECT and UDP ASSOCIATE)", context)
        }
        let normalized = HostName.normalized(host)
        guard DNSHostName.isValid(host) || HostName.isIPAddress(normalized), (1...65535).contains(port) else {
            return refuse(flow, reply: .addressUnsupported,
                          reason: "SOCKS5 target '\(host.prefix(200))' port \(port) is not a host and port", context)
        }
        // From here on the host is in its one canonical form, as an HTTP CONNECT's is.
        host = normalized
        flow.host = normalized
        let rules = services.rules.current
        if !rules.isInert, let block = rules.blockingConnect(host: normalized, port: port) {
            flow.appliedRules = [block.name]
            return refuse(flow, reply: .notAllowed, reason: "blocked by rule '\(block.name)'", context)
        }
        let dns = rules.dnsOverride(host: normalized, port: port)
        if let destinationGuard, dns == nil, let address = destinationGuard.internalAddress(named: host) {
            return refuse(flow, reply: .notAllowed,
                          reason: ProxyFailure.internalDestination(host: host, address: address.description).message, context)
        }
        if let interception = services.interception, !rules.sslProxying.exclude.matches(normalizedHost: normalized) {
            intercept(flow, host: host, port: port, interception: interception, rules: rules, context: context)
            return
        }
        if services.interception != nil {
            flow.appendNote("not decrypted: excluded by ssl_proxying")
            flow.appliedRules.append("ssl_proxying")
        }
        if let dns { flow.appliedRules.append(dns.name) }
        let proxy = services.configuration.upstreamProxies.proxyForTunnel(host: normalized, port: port, rules: rules,
                                                                          recordingOn: &flow)
        relay(flow, host: host, port: port, addresses: dns?.action.addresses, via: proxy, context: context)
    }

    /// Answers "succeeded" and hands the connection to the same first-bytes decision as an
    /// intercepted HTTP CONNECT.
    private func intercept(_ flow: Flow, host: String, port: Int, interception: TLSInterception, rules: RuleSet,
                           context: ChannelHandlerContext) {
        var flow = flow
        flow.status = 200
        flow.reason = "Connection established"
        done = true
        context.writeAndFlush(wrapOutboundOut(.response(.init(reply: .succeeded, boundAddress: Self.unspecified))),
                              promise: nil)
        let tunnel = InterceptedTunnel(services: services, interception: interception, channel: context.channel,
                                       host: host, port: port, flow: flow, rules: rules,
                                       destinationGuard: destinationGuard)
        handOver(to: tunnel.makeSniffer(), context: context)
    }

    /// Opens a UDP relay (`SOCKSUDPAssociation`) and answers with its address; the connection
    /// then only keeps the association alive.
    private func associate(_ flow: Flow, clientPort: Int, context: ChannelHandlerContext) {
        var flow = flow
        flow.method = "UDP"  // a token, like every method a flow has (HAR, curl and the list read it as one)
        flow.scheme = "udp"
        // Host and port stay what the client named (where it sends from, often 0.0.0.0:0) until
        // the association ends with a first destination to show instead.
        guard let clientIP = context.channel.remoteAddress?.ipAddress.flatMap({ IPAddressBytes($0) }) else {
            return refuse(flow, reply: .serverFailure, reason: "the client's address is unknown", context)
        }
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        SOCKSUDPAssociation.open(services: services, control: channel, flow: flow, clientIP: clientIP,
                                 clientPort: clientPort == 0 ? nil : clientPort, destinationGuard: destinationGuard,
                                 rules: services.rules.current)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .failure(let error):
                    self.refuse(flow, reply: .serverFailure,
                                reason: "cannot open a UDP socket for the relay: \(SystemErrorText.describe(error, peer: .server))",
                                context)
                case .success(let association):
                    guard channel.isActive, let bound = association.boundAddress else {
                        association.close()
                        return
                    }
                    self.done = true
                    association.established()
                    context.writeAndFlush(self.wrapOutboundOut(.response(.init(reply: .succeeded, boundAddress: .address(bound)))),
                                          promise: nil)
                    self.handOver(to: SOCKSUDPControlHandler(association: association), context: context)
                    channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in channel.read() }
                }
            }
    }

    /// Dials the target first (reads paused meanwhile), so a failure is a SOCKS reply code; then
    /// a byte relay recorded as the flow.
    private func relay(_ flow: Flow, host: String, port: Int, addresses: [String]?, via proxy: UpstreamProxy?,
                       context: ChannelHandlerContext) {
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        var flow = flow
        let throttle = TunnelThrottle.profile(host: HostName.normalized(host), port: port, rules: services.rules.current,
                                              configuration: services.configuration, recordingOn: &flow)
        let services = self.services, guardPolicy = destinationGuard
        TunnelThrottle.dial(throttle, client: channel) {
            services.connector.connect(host: host, port: port, addresses: addresses, kind: .raw, tls: nil,
                                       refusingInternal: addresses == nil ? guardPolicy : nil, via: proxy,
                                       on: channel.eventLoop)
        }
            .assumeIsolated()
            .whenComplete { [flow] result in
                var flow = flow
                switch result {
                case .failure(let error):
                    let failure = error as? ProxyFailure
                        ?? .connectFailed(host: host, port: port, reason: SystemErrorText.describe(error, peer: .server))
                    self.refuse(flow, reply: Self.reply(for: failure), reason: failure.message, context)
                case .success(let (upstream, timings)):
                    guard channel.isActive else {
                        upstream.close(promise: nil)
                        return
                    }
                    flow.serverAddress = upstream.remoteAddress?.ipAddress
                    flow.timings.dns = timings.dns
                    flow.timings.connect = timings.connect
                    flow.status = 200
                    flow.reason = "Connection established"
                    self.done = true
                    let bound = upstream.localAddress.map { SOCKSAddress.address($0) } ?? Self.unspecified
                    context.writeAndFlush(self.wrapOutboundOut(.response(.init(reply: .succeeded, boundAddress: bound))),
                                          promise: nil)
                    let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: TunnelMeter.recording(flow, to: self.services.sink))
                    do {
                        try upstream.pipeline.syncOperations.addHandler(serverGlue)
                    } catch {
                        upstream.close(promise: nil)
                        context.close(promise: nil)
                        return
                    }
                    self.handOver(to: clientGlue, context: context)
                    upstream.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in upstream.read() }
                    channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in channel.read() }
                }
            }
    }

    /// Puts `handler` where the SOCKS handlers were; bytes the client sent after its request
    /// (NIOSOCKS holds them) reach it when the handshake handler leaves, followed by a read
    /// complete so that a relay flushes them at once.
    private func handOver(to handler: any ChannelHandler, context: ChannelHandlerContext) {
        let channel = context.channel
        let pipeline = context.pipeline.syncOperations
        do {
            try pipeline.addHandler(handler, position: .after(self))
            let handshake = try pipeline.handler(type: SOCKSServerHandshakeHandler.self)
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(handshake, promise: nil)
            channel.pipeline.fireChannelReadComplete()
        } catch {
            context.close(promise: nil)
        }
    }

    private func refuse(_ flow: Flow, reply: SOCKSServerReply, reason: String, _ context: ChannelHandlerContext) {
        var flow = flow
        flow.finishFailedTunnel(because: reason)
        services.sink.record(flow)
        finish(context, with: .response(.init(reply: reply, boundAddress: Self.unspecified)))
    }

    /// Writes `message`, then closes.
    private func finish(_ context: ChannelHandlerContext, with message: ServerMessage) {
        done = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(message)).whenComplete { _ in channel.close(promise: nil) }
    }

    private static let unspecified = SOCKSAddress.address(try! SocketAddress(ipAddress: "0.0.0.0", port: 0))

    /// The SOCKS5 reply for a failure to reach the target.
    static func reply(for failure: ProxyFailure) -> SOCKSServerReply {
        switch failure {
        case .dnsFailure, .dnsTimeout, .connectFailed: return .hostUnreachable
        case .connectionRefused: return .refused
        case .connectTimeout: return .ttlExpired
        case .internalDestination, .clientNotAllowed, .proxyAuthenticationRequired: return .notAllowed
        default: return .serverFailure
        }
    }
}
