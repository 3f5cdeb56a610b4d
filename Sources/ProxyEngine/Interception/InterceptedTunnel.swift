import Foundation
import NIOCore
import NIOSSL
import ProxyCore
import ProxyModel
import Rules

/// Decides what a CONNECT tunnel carries once the client's first bytes arrive, and sets the
/// client connection up for it:
///
/// - a TLS ClientHello for a host that is not pinned: present a certificate minted for its SNI
///   (or the CONNECT host when there is none), then run the decrypted requests through the
///   same HTTP path as plain ones, sent to the origin over TLS;
/// - an HTTP request line: proxy the tunnel's requests as plain HTTP to the CONNECT target;
/// - anything else, a pinned host, a host the rules' `ssl_proxying` lists exclude, or silence
///   (server speaks first): relay bytes untouched, recorded as a tunnel flow.
///
/// The upstream connection is opened only when needed, so decrypted requests can use pooled
/// TLS connections to the origin across client connections.
final class InterceptedTunnel {
    private let services: ProxyServices
    private let interception: TLSInterception
    private let channel: any Channel
    private let host: String
    private let port: Int
    /// The CONNECT's flow (status 200 already): recorded for relayed tunnels and failed
    /// handshakes; decrypted exchanges are flows of their own.
    private var flow: Flow
    private var sniffer: FirstBytesSniffer?
    private var clientGone = false
    /// The rules in force when the CONNECT arrived.
    private let rules: RuleSet
    /// Set when the ClientHello offers only versions below `--client-tls-min`: the handshake will
    /// be refused, and the flow says so instead of counting it towards pinning.
    private var clientVersionRefusal: String?

    init(services: ProxyServices, interception: TLSInterception, channel: any Channel, host: String, port: Int,
         flow: Flow, rules: RuleSet) {
        self.services = services
        self.rules = rules
        self.interception = interception
        self.channel = channel
        self.host = host
        self.port = port
        self.flow = flow
    }

    /// The handler that waits for the first bytes; it goes where the HTTP handlers were.
    func makeSniffer() -> FirstBytesSniffer {
        let sniffer = FirstBytesSniffer(
            timeout: interception.firstBytesTimeout,
            callbacks: .init(
                decided: { kind in
                    // Act on the next tick: never re-enter the pipeline from the sniffer's read.
                    self.channel.eventLoop.assumeIsolated().execute { self.decided(kind) }
                },
                clientClosed: { self.clientClosedBeforeHandover() }))
        self.sniffer = sniffer
        return sniffer
    }

    private func decided(_ kind: FirstBytes) {
        guard !clientGone, channel.isActive else { return }
        switch kind {
        case .tls(let hello):
            let serverName = hello.serverName
            let name = serverName ?? host
            if let pin = interception.pins?.pin(for: name) {
                relay(note: "pinned: \(pin.reason)")
            } else if !rules.sslProxying.decrypts(connectHost: HostName.normalized(host),
                                                  serverName: serverName.map { HostName.normalized($0) }) {
                flow.appliedRules.append("ssl_proxying")
                relay(note: "not decrypted: excluded by ssl_proxying")
            } else {
                clientVersionRefusal = TLSVersionRefusal.clientNote(for: hello, minimum: interception.clientMinimumVersion)
                mintAndIntercept(certificateHost: name, serverName: serverName)
            }
        case .http:
            installHTTP(scheme: "http", tls: nil)
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
            let context = try TLSInterception.serverContext(for: identity, minimumVersion: interception.clientMinimumVersion)
            let state = ClientTLSState(serverName: serverName)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ClientTLSCloseFinisher(state: state))
            try pipeline.addHandler(NIOSSLServerHandler(context: context))
            try pipeline.addHandler(ClientTLSObserver(
                state: state, host: certificateHost, pins: interception.pins, sink: services.sink, flow: flow,
                versionRefusal: clientVersionRefusal))
            installHTTP(scheme: "https", tls: state)
        } catch {
            fail("cannot present a certificate for '\(certificateHost)': \(error)")
        }
    }

    private func installHTTP(scheme: String, tls: ClientTLSState?) {
        do {
            let origin = HTTPProxyHandler.TunnelOrigin(scheme: scheme, host: host, port: port, tls: tls)
            try ClientPipelineSetup.configure(channel, services: services, tunnel: origin)
            sniffer?.handOver()
        } catch {
            fail("cannot set up the connection: \(error)")
        }
    }

    // MARK: relaying untouched

    private func relay(note: String?) {
        flow.note = note
        let loop = channel.eventLoop
        let dns = rules.dnsOverride(host: HostName.normalized(host), port: port)
        if let dns { flow.appliedRules.append(dns.name) }
        services.connector.connect(host: host, port: port, addresses: dns?.action.addresses, kind: .raw, tls: nil,
                                   on: loop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let (upstream, timings)):
                    guard !self.clientGone, self.channel.isActive else {
                        upstream.close(promise: nil)
                        return
                    }
                    self.flow.timings.dns = timings.dns
                    self.flow.timings.connect = timings.connect
                    self.glue(to: upstream)
                case .failure(let error):
                    let failure = error as? ProxyFailure
                        ?? .connectFailed(host: self.host, port: self.port, reason: "\(error)")
                    self.fail(failure.message)
                }
            }
    }

    private func glue(to upstream: any Channel) {
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
        upstream.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in
            upstream.read()
        }
    }

    // MARK: failing

    private func fail(_ reason: String) {
        guard !clientGone else { return }
        clientGone = true
        flow.finishedAt = Date()
        flow.error = reason
        services.sink.record(flow)
        channel.close(promise: nil)
    }

    private func clientClosedBeforeHandover() {
        guard !clientGone else { return }
        clientGone = true
        flow.finishedAt = Date()
        flow.error = "the client closed the tunnel before it was set up"
        services.sink.record(flow)
    }
}
