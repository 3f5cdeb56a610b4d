import Foundation
import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// Carries out one CONNECT request.
///
/// With HTTPS interception on it answers `200 Connection established` at once and hands the
/// connection to an `InterceptedTunnel`, which looks at the client's first bytes before
/// deciding between decrypting, plain HTTP and a byte relay (pins are per client, so a pinned
/// host is known only from the ClientHello). Otherwise it opens the TCP connection to the
/// target first (so a failure is still a 502), answers 200, turns both connections into a byte
/// relay and records the tunnel as a flow when it closes.
///
/// Known gap of that eager path: bytes the client sent after the CONNECT are lost when its FIN
/// arrives while the target is being dialled, since the FIN reaches the HTTP decoder (which then
/// drops what it holds) before any handover; `InputClosedHold` guards only the handover itself.
final class ConnectTunnel {
    private unowned let client: ClientHTTPHandler
    private let services: ProxyServices
    private let clientVersion: HTTPVersion
    private let host: String
    private let port: Int
    private var flow: Flow
    private var upstream: (any Channel)?
    private var requestEnded = false
    private var finished = false
    /// Interception decides after the 200, from the first bytes; no upstream connection yet.
    private var interception: TLSInterception?
    /// The rules in force when the CONNECT arrived: they decide for the whole tunnel.
    private let rules: RuleSet
    /// The tunnel's host in the form rules match (`HostName.normalized`).
    private let normalizedHost: String

    init(client: ClientHTTPHandler, services: ProxyServices, head: HTTPRequestHead, host: String, port: Int,
         clientAddress: String, rules: RuleSet) {
        self.client = client
        self.services = services
        self.rules = rules
        self.normalizedHost = HostName.normalized(host)
        self.clientVersion = head.version
        self.host = host
        self.port = port
        self.flow = Flow(
            kind: .tunnel, clientAddress: clientAddress, startedAt: Date(), method: "CONNECT", scheme: "tcp",
            host: host, port: port, path: "", httpVersion: ExchangeRecorder.versionText(head.version),
            requestHeaders: ExchangeRecorder.requestFields(head.headers))
    }

    func start() {
        if let refusal = refusal() {
            refuse(refusal)
            return
        }
        if let interception = services.interception {
            if BuiltInPages.isReservedHost(host) {
                // The proxy's own pages: always decrypted (or plain HTTP), never pinned or dialled.
                self.interception = interception
                establishIfReady()
                return
            } else if rules.sslProxying.exclude.matches(normalizedHost: normalizedHost) {
                // Excluded by its host alone: relay at once, as without interception (a failure
                // is still a 502 on the CONNECT). Everything else is decided after the
                // ClientHello, whose server name may include or exclude it.
                flow.note = "not decrypted: excluded by ssl_proxying"
                flow.appliedRules.append("ssl_proxying")
            } else {
                self.interception = interception
                establishIfReady()
                return
            }
        }
        let dns = rules.dnsOverride(host: normalizedHost, port: port)
        if let dns { flow.appliedRules.append(dns.name) }
        let proxy = services.configuration.upstreamProxies.proxyForTunnel(host: normalizedHost, port: port, rules: rules,
                                                                          recordingOn: &flow)
        let throttle = TunnelThrottle.profile(host: normalizedHost, port: port, rules: rules,
                                              configuration: services.configuration, recordingOn: &flow)
        guard let clientChannel = client.channel else { return }
        let services = self.services, host = self.host, port = self.port, guardPolicy = client.destinationGuard
        TunnelThrottle.dial(throttle, client: clientChannel) {
            services.connector.connect(host: host, port: port, addresses: dns?.action.addresses, kind: .raw, tls: nil,
                                       refusingInternal: dns == nil ? guardPolicy : nil, via: proxy,
                                       on: clientChannel.eventLoop)
        }
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let (channel, timings)):
                    guard !self.finished else {
                        channel.close(promise: nil)
                        return
                    }
                    self.upstream = channel
                    self.flow.serverAddress = channel.remoteAddress?.ipAddress
                    self.flow.timings.dns = timings.dns
                    self.flow.timings.connect = timings.connect
                    self.establishIfReady()
                case .failure(let error):
                    self.refuse(error as? ProxyFailure ?? .connectFailed(host: self.host, port: self.port, reason: SystemErrorText.describe(error, peer: .server)))
                }
            }
    }

    /// Why this CONNECT is refused before anything is opened, if it is.
    ///
    /// With interception a certificate may be minted for the CONNECT host (clients send no SNI
    /// for IP targets, and may send none at all), so it must be a name a certificate can be made
    /// for: an IP literal or a DNS name (letters, digits, `-`, `_`), never `*.com` (a wildcard
    /// certificate for a client-chosen name) or other text no host has. Without interception
    /// the name only goes to the resolver, which refuses what it cannot resolve (502).
    /// A client from elsewhere naming this machine's own address (`ClientAccessPolicy`) is refused
    /// here, before a `200` could tell it the tunnel is open.
    /// `proxyapp.cert` is the proxy's own: without interception there is no tunnel to serve
    /// its pages in, so the client is told to ask for them without CONNECT.
    private func refusal() -> ProxyFailure? {
        if let guardPolicy = client.destinationGuard, rules.dnsOverride(host: normalizedHost, port: port) == nil,
           let address = guardPolicy.internalAddress(named: host) {
            return .internalDestination(host: host, address: address.description)
        }
        if services.interception == nil {
            guard BuiltInPages.isReservedHost(host) else { return nil }
            return .notImplemented(reason: "HTTPS interception is off: open http://\(BuiltInPages.reservedHost)/ "
                                   + "through the proxy without CONNECT")
        }
        guard !HostName.isIPAddress(normalizedHost), !DNSHostName.isValid(host) else { return nil }
        return .badRequest(reason: "CONNECT target '\(host.prefix(200))' is not a host name or an IP address "
                           + "(no certificate is made for wildcards or other patterns)")
    }

    /// Answers the CONNECT with `failure` and records the flow.
    private func refuse(_ failure: ProxyFailure) {
        guard !finished else { return }
        finished = true
        flow.error = failure.message
        flow.finishedAt = Date()
        services.sink.record(flow)
        client.answer(failure, version: clientVersion, keepAlive: false, requestEnded: requestEnded)
    }

    func clientRequestEnded() {
        requestEnded = true
        establishIfReady()
    }

    /// The client left before the tunnel was up.
    func clientClosed() {
        guard !finished else { return }
        finished = true
        upstream?.close(promise: nil)
        flow.error = "client closed the connection before the tunnel was established"
        flow.finishedAt = Date()
        services.sink.record(flow)
    }

    private func establishIfReady() {
        guard requestEnded, upstream != nil || interception != nil, !finished else { return }
        finished = true
        let established = HTTPResponseStatus.custom(code: 200, reasonPhrase: "Connection established")
        client.write(.head(HTTPResponseHead(version: clientVersion, status: established)))
        client.write(.end(nil))
        client.flush()
        flow.status = 200
        flow.reason = established.reasonPhrase

        guard let upstream else {
            if let interception, let channel = client.channel {
                let tunnel = InterceptedTunnel(
                    services: services, interception: interception, channel: channel, host: host, port: port,
                    flow: flow, rules: rules, destinationGuard: client.destinationGuard)
                client.switchToHandler(tunnel.makeSniffer())
            }
            return
        }
        let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: TunnelMeter.recording(flow, to: services.sink))
        do {
            try upstream.pipeline.syncOperations.addHandler(serverGlue)
        } catch {
            upstream.close(promise: nil)
            client.abortConnection()
            return
        }
        let clientInputClosed = client.inputClosed
        client.switchToRawBytes(glue: clientGlue)
        if clientInputClosed {
            // The client finished sending before the tunnel was up: the glue will never see that
            // event, so pass the end of input on now.
            upstream.close(mode: .output, promise: nil)
        }
        // Raw upstream channels start without auto-read so no byte arrives before the glue.
        upstream.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in
            upstream.read()
        }
    }
}
