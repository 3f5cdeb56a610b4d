import Foundation
import NIOCore
import NIOSSL
import ProxyCore
import ProxyModel
import ProxyTLS
import Rules

/// Decides what a CONNECT tunnel carries once the client's first bytes arrive, and sets the
/// client connection up for it:
///
/// - a TLS ClientHello for a host that is not pinned for this client (its address and
///   ClientHello fingerprint, `ClientIdentity`): present a certificate minted for its SNI
///   (or the CONNECT host when there is none), then run the decrypted requests through the
///   same HTTP path as plain ones, sent to the origin over TLS;
/// - an HTTP request line: proxy the tunnel's requests as plain HTTP to the CONNECT target;
/// - anything else, a pinned host, a host the rules' `ssl_proxying` lists exclude, a server
///   that speaks first, or a wait that ends undecided: relay bytes untouched, recorded as a
///   tunnel flow (with a note saying why, except for bytes that are simply neither TLS nor HTTP).
///
/// Who speaks first is `FirstSpeaker`'s decision; this type carries it out (timers, the early
/// origin connection, the handover). The upstream connection for decrypted requests is opened
/// only when they need it, so they can use pooled TLS connections to the origin across client
/// connections; the price is that a CONNECT to a dead host is answered 200 and its failure comes
/// as a 502 inside the tunnel (or a close, when relayed), recorded on the flow either way.
///
/// The certificate is chosen from our own ClientHello parse before NIOSSL sees the bytes, not
/// with `sslContextCallback`: the callback cannot see the CONNECT host, which clients without SNI
/// (IP targets) need. A server `NIOSSLContext` per connection costs microseconds.
final class InterceptedTunnel {
    private let services: ProxyServices
    private let interception: TLSInterception
    private let channel: any Channel
    private let host: String
    private let port: Int
    /// The CONNECT's flow (status 200 already): recorded for relayed tunnels and failed
    /// handshakes (then without a status: `finishFailedTunnel`); decrypted exchanges are flows of their own.
    private var flow: Flow
    private var sniffer: FirstBytesSniffer?
    private var clientGone = false
    /// The rules in force when the CONNECT arrived.
    private let rules: RuleSet
    /// Set when the ClientHello offers only versions below `--client-tls-min`: the handshake will
    /// be refused, and the flow says so instead of counting it towards pinning.
    private var clientVersionRefusal: String?
    /// Who the client is, from its address and its ClientHello; set when the hello arrives.
    private var client: ClientIdentity?
    private var speaker = FirstSpeaker()
    private var quietTimer = DeadlineTimer()
    private var deadlineTimer = DeadlineTimer()
    /// The origin connection opened while the client was silent, to hear a server that speaks first.
    private var earlyOrigin: EarlyOrigin?
    /// A relay decided while the early origin was still being dialled: it goes over that connection.
    private var relayAwaitsDial = false
    /// The dns rule's name is added to the flow once, however many dials there are.
    private var dnsRuleNoted = false
    /// The application protocols (ALPN) of the client's ClientHello, in its order.
    private var offeredProtocols: [String] = []

    private enum EarlyOrigin {
        case dialling
        case connected(any Channel, FirstBytesSniffer)
    }

    /// Keeps a client from elsewhere off this machine's own addresses (nil: unguarded).
    private let destinationGuard: ClientAccessPolicy?

    init(services: ProxyServices, interception: TLSInterception, channel: any Channel, host: String, port: Int,
         flow: Flow, rules: RuleSet, destinationGuard: ClientAccessPolicy? = nil) {
        self.services = services
        self.destinationGuard = destinationGuard
        self.rules = rules
        self.interception = interception
        self.channel = channel
        self.host = host
        self.port = port
        self.flow = flow
    }

    /// The handler that waits for the client's first bytes; it goes where the HTTP handlers
    /// were. The waiting starts now (the `200` has just been written).
    func makeSniffer() -> FirstBytesSniffer {
        let loop = channel.eventLoop
        let sniffer = FirstBytesSniffer.client(callbacks: .init(
            decided: { kind in
                // Act on the next tick: never re-enter the pipeline from the sniffer's read.
                loop.assumeIsolated().execute { self.perform(self.speaker.clientDecided(kind)) }
            },
            closed: { self.clientClosedBeforeHandover() }))
        self.sniffer = sniffer
        let now = NIODeadline.now()
        quietTimer.schedule(at: now + interception.quietPeriod, on: loop) {
            self.perform(self.speaker.quietPeriodEnded(clientBytes: self.clientBytesHeld))
        }
        let seconds = interception.firstBytesTimeout.nanoseconds / 1_000_000_000
        deadlineTimer.schedule(at: now + interception.firstBytesTimeout, on: loop) {
            self.perform(self.speaker.deadlinePassed(clientBytes: self.clientBytesHeld, after: seconds))
        }
        return sniffer
    }

    private var clientBytesHeld: Int { sniffer?.heldByteCount ?? 0 }

    private func perform(_ action: FirstSpeaker.Action) {
        guard !clientGone, channel.isActive else { return }
        switch action {
        case .none:
            return
        case .dialOrigin:
            dialEarlyOrigin()
        case .clientDecides(let kind):
            stopWaiting()
            decided(kind)
        case .relay(let note):
            stopWaiting()
            sniffer?.settle()
            relay(note: note)
        }
    }

    private func stopWaiting() {
        quietTimer.cancel()
        deadlineTimer.cancel()
    }

    /// `proxyapp.cert`: the proxy's own pages, decrypted or plain, never pinned, relayed or dialled.
    private var isBuiltInPageHost: Bool { BuiltInPages.isReservedHost(host) }

    private func decided(_ kind: FirstBytes) {
        switch kind {
        case .tls(let hello):
            let serverName = hello.serverName
            let name = serverName ?? host
            let client = ClientIdentity(connectedFrom: flow.clientAddress, fingerprint: ClientHelloFingerprint.of(hello))
            self.client = client
            offeredProtocols = hello.alpnProtocols
            if isBuiltInPageHost {
                mintAndIntercept(certificateHost: BuiltInPages.reservedHost, serverName: serverName)
            } else if let pin = interception.pins?.pin(for: name, client: client) {
                relay(note: ClientTLSObserver.pinnedNote(pin))
            } else if !rules.sslProxying.decrypts(connectHost: HostName.normalized(host),
                                                  serverName: serverName.map { HostName.normalized($0) }) {
                flow.appliedRules.append("ssl_proxying")
                relay(note: "not decrypted: excluded by ssl_proxying")
            } else {
                clientVersionRefusal = TLSVersionRefusal.clientNote(for: hello, minimum: interception.clientMinimumVersion)
                closeEarlyOrigin()
                mintAndIntercept(certificateHost: name, serverName: serverName)
            }
        case .http:
            closeEarlyOrigin()
            installHTTP(scheme: "http", tls: nil, front: .http1)
        case .http2PriorKnowledge where interception.offersHTTP2:
            closeEarlyOrigin()
            installHTTP(scheme: "http", tls: nil, front: .http2)
        case .http2PriorKnowledge:
            relay(note: "cleartext HTTP/2 relayed undecoded: --no-http2")
        case .opaque, .needMore:
            relay(note: nil)
        }
    }

    // MARK: decrypting

    private func mintAndIntercept(certificateHost: String, serverName: String?) {
        let loop = channel.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        interception.identities.identity(forHost: certificateHost) { result in
            loop.execute { bound.value.intercept(result, certificateHost: certificateHost, serverName: serverName) }
        }
    }

    private func intercept(_ result: Result<ServerIdentity, any Error>, certificateHost: String, serverName: String?) {
        guard !clientGone, channel.isActive else { return }
        do {
            let identity = try result.get()
            // The built-in pages are HTTP/1.1 only: a browser fetching the CA gets nothing from h2.
            let protocols = isBuiltInPageHost ? ["http/1.1"] : interception.applicationProtocols(offered: offeredProtocols)
            let context = try interception.serverContexts.context(
                for: identity, minimumVersion: interception.clientMinimumVersion, protocols: protocols)
            let state = ClientTLSState(serverName: serverName)
            let pipeline = channel.pipeline.syncOperations
            // The sniffer still holds the client's first bytes: they reach the recorder (and are
            // read as sent before our certificate) before the TLS handler sees them.
            let wire = HandshakeWireRecorder(clientInputAlreadyClosed: sniffer?.inputClosed ?? false)
            try pipeline.addHandler(ClientTLSCloseFinisher(state: state))
            try pipeline.addHandler(wire)
            try ChannelTuning.boundTLSReads(on: channel)
            try pipeline.addHandler(NIOSSLServerHandler(context: context))
            try pipeline.addHandler(ClientTLSObserver(
                state: state, host: certificateHost, pins: interception.pins,
                client: client ?? ClientIdentity(connectedFrom: flow.clientAddress, fingerprint: ""),
                failuresPin: !isBuiltInPageHost, sink: services.sink, flow: flow, wire: wire,
                versionRefusal: clientVersionRefusal))
            installHTTP(scheme: "https", tls: state, front: .negotiated)
        } catch {
            fail("cannot present a certificate for '\(certificateHost)': \(error)")
        }
    }

    /// Which HTTP front the tunnel's decrypted or plain bytes get.
    private enum Front {
        case http1
        /// Cleartext HTTP/2 with prior knowledge (`curl --http2-prior-knowledge -p`).
        case http2
        /// Whatever the TLS handshake's ALPN agrees on (`ClientProtocolSelector`).
        case negotiated
    }

    private func installHTTP(scheme: String, tls: ClientTLSState?, front: Front) {
        do {
            let origin = ClientHTTPHandler.TunnelDestination(scheme: scheme, host: host, port: port, tls: tls)
            switch front {
            case .http1: try ClientPipelineSetup.configure(channel, services: services, tunnel: origin)
            case .http2: try ClientHTTP2Setup.configure(channel, services: services, tunnel: origin)
            case .negotiated:
                try channel.pipeline.syncOperations.addHandler(ClientProtocolSelector(services: services, tunnel: origin))
            }
            sniffer?.handOver()
        } catch {
            fail("cannot set up the connection: \(SystemErrorText.describe(error))")
        }
    }

    // MARK: relaying untouched

    /// Relays the tunnel untouched: over the early origin connection when there is one (its
    /// first bytes go to the client first), else over a new one.
    private func relay(note: String?) {
        guard !isBuiltInPageHost else {
            return fail("\(BuiltInPages.reservedHost) is the proxy's own: it answers HTTP and HTTPS only")
        }
        if let note { flow.note = note }
        switch earlyOrigin {
        case .connected(let upstream, let originSniffer)?:
            earlyOrigin = nil
            glue(to: upstream, originSniffer: originSniffer)
        case .dialling?:
            relayAwaitsDial = true
        case nil:
            dialOrigin().whenComplete { result in
                switch result {
                case .success(let upstream):
                    guard !self.clientGone, self.channel.isActive else {
                        upstream.close(promise: nil)
                        return
                    }
                    self.glue(to: upstream, originSniffer: nil)
                case .failure(let error):
                    self.fail(self.connectFailure(error))
                }
            }
        }
    }

    /// A raw connection to the CONNECT target (the rules' dns override applies), its timings on the flow.
    private func dialOrigin() -> EventLoopFuture<any Channel>.Isolated {
        let normalized = HostName.normalized(host)
        let dns = rules.dnsOverride(host: normalized, port: port)
        let proxy: UpstreamProxy?
        let throttle: ThrottleProfile?
        if !dnsRuleNoted {
            dnsRuleNoted = true
            if let dns { flow.appliedRules.append(dns.name) }
            proxy = services.configuration.upstreamProxies.proxyForTunnel(host: normalized, port: port, rules: rules,
                                                                          recordingOn: &flow)
            throttle = TunnelThrottle.profile(host: normalized, port: port, rules: rules,
                                              configuration: services.configuration, recordingOn: &flow)
        } else {
            proxy = services.configuration.upstreamProxies.proxyForTunnel(host: normalized, port: port, rules: rules).proxy
            var scratch = flow
            throttle = TunnelThrottle.profile(host: normalized, port: port, rules: rules,
                                              configuration: services.configuration, recordingOn: &scratch)
        }
        let services = self.services, host = self.host, port = self.port, guardPolicy = destinationGuard
        let loop = channel.eventLoop
        return TunnelThrottle.dial(throttle, client: channel) {
            services.connector.connect(host: host, port: port, addresses: dns?.action.addresses, kind: .raw, tls: nil,
                                       refusingInternal: dns == nil ? guardPolicy : nil, via: proxy, on: loop)
        }
            .assumeIsolated()
            .map { connected in
                self.flow.timings.dns = connected.1.dns
                self.flow.timings.connect = connected.1.connect
                return connected.0
            }
    }

    private func connectFailure(_ error: any Error) -> String {
        (error as? ProxyFailure ?? .connectFailed(host: host, port: port, reason: SystemErrorText.describe(error, peer: .server))).message
    }

    /// The client stayed silent: connect to the origin and listen, in case it speaks first.
    private func dialEarlyOrigin() {
        guard !isBuiltInPageHost else { return }  // nothing to dial: only the client can speak
        earlyOrigin = .dialling
        dialOrigin().whenComplete { result in
            switch result {
            case .success(let upstream):
                self.earlyOriginConnected(upstream)
            case .failure(let error):
                self.earlyOrigin = nil
                if self.relayAwaitsDial {
                    self.fail(self.connectFailure(error))
                } else {
                    self.perform(self.speaker.originUnavailable())
                }
            }
        }
    }

    private func earlyOriginConnected(_ upstream: any Channel) {
        guard !clientGone, channel.isActive, case .dialling? = earlyOrigin else {
            upstream.close(promise: nil)
            return
        }
        if relayAwaitsDial {
            earlyOrigin = nil
            glue(to: upstream, originSniffer: nil)
            return
        }
        let loop = channel.eventLoop
        let originSniffer = FirstBytesSniffer.origin(callbacks: .init(
            decided: { _ in loop.assumeIsolated().execute { self.earlyOriginDecided(upstream) } },
            closed: { loop.assumeIsolated().execute { self.earlyOriginLeft(upstream) } }))
        do {
            try upstream.pipeline.syncOperations.addHandler(originSniffer)
        } catch {
            upstream.close(promise: nil)
            earlyOrigin = nil
            perform(speaker.originUnavailable())
            return
        }
        earlyOrigin = .connected(upstream, originSniffer)
        perform(speaker.originConnected())
        upstream.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in
            upstream.read()
        }
    }

    /// The watched origin sent bytes, or ended its output without any.
    private func earlyOriginDecided(_ upstream: any Channel) {
        guard case .connected(let current, let originSniffer)? = earlyOrigin, current === upstream else { return }
        if originSniffer.heldByteCount == 0 {
            earlyOriginLeft(upstream)
        } else {
            perform(speaker.originSpoke(clientBytes: clientBytesHeld))
        }
    }

    /// The watched origin closed before the handover: forget it and keep waiting for the client.
    private func earlyOriginLeft(_ upstream: any Channel) {
        guard case .connected(let current, _)? = earlyOrigin, current === upstream else { return }
        earlyOrigin = nil
        upstream.close(promise: nil)
        perform(speaker.originUnavailable())
    }

    /// The client's bytes decided for decryption or HTTP: the early connection is not needed
    /// (decrypted requests use the upstream pool).
    private func closeEarlyOrigin() {
        if case .connected(let upstream, _)? = earlyOrigin {
            upstream.close(promise: nil)
        }
        earlyOrigin = nil
        relayAwaitsDial = false
    }

    private func glue(to upstream: any Channel, originSniffer: FirstBytesSniffer?) {
        let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: TunnelMeter.recording(flow, to: services.sink))
        do {
            try upstream.pipeline.syncOperations.addHandler(serverGlue)
            try channel.pipeline.syncOperations.addHandler(clientGlue)
        } catch {
            upstream.close(promise: nil)
            channel.close(promise: nil)
            return
        }
        sniffer?.handOver()
        clientGlue.flushPartner()
        if let originSniffer {
            originSniffer.handOver()  // the origin's first bytes, then reads resume (auto-read is on)
        } else {
            upstream.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in
                upstream.read()
            }
        }
    }

    // MARK: failing

    private func fail(_ reason: String) {
        guard !clientGone else { return }
        clientGone = true
        stopWaiting()
        closeEarlyOrigin()
        flow.finishFailedTunnel(because: reason)
        services.sink.record(flow)
        channel.close(promise: nil)
    }

    private func clientClosedBeforeHandover() {
        guard !clientGone else { return }
        clientGone = true
        stopWaiting()
        closeEarlyOrigin()
        flow.finishFailedTunnel(because: "the client closed the tunnel before it was set up")
        services.sink.record(flow)
    }
}
