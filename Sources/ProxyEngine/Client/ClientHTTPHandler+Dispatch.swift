import Foundation
import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// How `ClientHTTPHandler` dispatches each request: to a CONNECT tunnel, a built-in page, a
/// local answer a rule asks for (block, map-local), or a forwarded exchange (maybe mapped
/// elsewhere and rewritten by rules).
extension ClientHTTPHandler {
    func startRequest(_ head: HTTPRequestHead) {
        guard case .idle = state, let pool else {
            // HTTPServerPipelineHandler hands over one request at a time; anything else is a bug
            // here, and a hang would hide it: close instead.
            abortConnection()
            return
        }
        idleSince = nil
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(method: head.method.rawValue, uri: head.uri)
        } catch {
            answer(.badRequest(reason: error.description), version: head.version, keepAlive: false, requestEnded: false)
            return
        }
        if let tunnel {
            startTunnelledRequest(head, target: target, tunnel: tunnel, pool: pool)
            return
        }
        switch target {
        case .origin(let pathAndQuery):
            answerBuiltInPage(pathAndQuery, head: head)
        case .authority(let host, let port):
            if let reason = ConnectRequest.bodyRefusal(head.headers) {
                answer(.badRequest(reason: reason), version: head.version, keepAlive: false, requestEnded: false)
                return
            }
            let rules = services.rules.current
            if !rules.isInert, let block = rules.blockingConnect(host: HostName.normalized(host), port: port) {
                refuseConnect(head, host: host, port: port, rule: block)
                return
            }
            let tunnel = ConnectTunnel(client: self, services: services, head: head, host: host, port: port,
                                       clientAddress: clientAddress, rules: rules)
            state = .tunnelling(tunnel)
            tunnel.start()
        case .absolute(let scheme, let host, let port, let pathAndQuery):
            guard scheme == "http" || scheme == "ws" else {
                answer(.notImplemented(reason: "\(scheme):// URLs must be requested through CONNECT"),
                       version: head.version, keepAlive: head.isKeepAlive, requestEnded: false)
                return
            }
            if BuiltInPages.isReservedHost(host) {
                answerBuiltInPage(pathAndQuery, head: head)
                return
            }
            forward(head, scheme: "http", host: host, port: port, pathAndQuery: pathAndQuery, clientTLS: nil, pool: pool)
        }
    }

    /// A request read inside a CONNECT tunnel: it goes to the tunnel's target (an absolute-form
    /// request may name another host; the tunnel's scheme applies either way).
    private func startTunnelledRequest(_ head: HTTPRequestHead, target: RequestTarget, tunnel: TunnelOrigin,
                                       pool: UpstreamConnectionPool) {
        switch target {
        case .origin(let pathAndQuery) where BuiltInPages.isReservedHost(tunnel.host),
             .absolute(_, _, _, let pathAndQuery) where BuiltInPages.isReservedHost(tunnel.host),
             .absolute(_, BuiltInPages.reservedHost, _, let pathAndQuery):
            // CONNECT proxyapp.cert: the pages, over TLS or not; and http://proxyapp.cert/ asked
            // in any tunnel (the parsed host is normalized: any case, no trailing dot).
            answerBuiltInPage(pathAndQuery, head: head)
        case .origin(let pathAndQuery):
            // The client's Host names the site (virtual hosting; the CONNECT may name an IP).
            let hosts = head.headers[canonicalForm: "host"]
            forward(head, scheme: tunnel.scheme, host: tunnel.host, port: tunnel.port, pathAndQuery: pathAndQuery,
                    clientTLS: tunnel.tls?.details, pool: pool, clientAuthority: hosts.count == 1 ? String(hosts[0]) : nil)
        case .absolute(_, let host, let port, let pathAndQuery):
            forward(head, scheme: tunnel.scheme, host: host, port: port, pathAndQuery: pathAndQuery,
                    clientTLS: tunnel.tls?.details, pool: pool)
        case .authority:
            answer(.notImplemented(reason: "CONNECT inside a CONNECT tunnel is not supported"),
                   version: head.version, keepAlive: false, requestEnded: false)
        }
    }

    /// Runs a request through the rules: answered here (block, map-local) or forwarded, maybe
    /// elsewhere (map-remote, dns) and with edits (rewrite).
    private func forward(_ head: HTTPRequestHead, scheme: String, host: String, port: Int, pathAndQuery: String,
                         clientTLS: TLSDetails?, pool: UpstreamConnectionPool, clientAuthority: String? = nil) {
        let recorder = ExchangeRecorder(
            clientAddress: clientAddress, method: head.method.rawValue, scheme: scheme, host: host, port: port,
            path: pathAndQuery, version: head.version, headers: head.headers,
            cap: services.configuration.maxCapturedBodyBytes, clientTLS: scheme == "https" ? clientTLS ?? TLSDetails() : nil)
        // Framing first: a request whose body could be read two ways never reaches rules or origin.
        let framing: RequestFraming.Decision
        switch RequestFraming.decide(head.headers, method: head.method.rawValue,
                                     isHTTP10: head.version.major == 1 && head.version.minor == 0) {
        case .success(let decision):
            framing = decision
        case .failure(let refusal):
            refuseFraming(refusal, head: head, recorder: recorder)
            return
        }
        let request = ClientRequest(
            head: head, scheme: scheme, host: host, port: port, pathAndQuery: pathAndQuery,
            authority: clientAuthority ?? ForwardExchange.authority(host: host, port: port, scheme: scheme),
            framing: framing)
        switch RequestRouting.decide(request, rules: services.rules.current) {
        case .block(let rule):
            answerLocally(request, .block(rule), recorder: recorder)
        case .mapLocal(let rule, let facts):
            answerLocally(request, .file(rule, LocalFileLookup.file(for: rule.action, request: facts, condition: rule.path)),
                          recorder: recorder)
        case .forward(let target):
            var upstreamTLS: UpstreamTLSTarget?
            if target.scheme == "https" {
                guard let interception = services.interception else {
                    let reason = scheme == "https" ? "HTTPS interception is off"
                        : "map_remote to an https:// URL needs HTTPS interception (run without --no-intercept)"
                    answer(.notImplemented(reason: reason), version: head.version, keepAlive: false, requestEnded: false)
                    return
                }
                let isIP = (try? SocketAddress(ipAddress: target.host, port: target.port)) != nil
                let sameHost = target.host == host
                upstreamTLS = UpstreamTLSTarget(
                    policy: interception.upstream,
                    serverName: (sameHost ? clientTLS?.sni : nil) ?? (isIP ? nil : target.host))
            }
            let exchange = ForwardExchange(client: self, services: services, pool: pool, request: request,
                                           target: target, recorder: recorder, upstreamTLS: upstreamTLS)
            state = .forwarding(exchange)
            exchange.start()
        }
    }

    /// Answers a request whose framing the proxy will not forward (400 or 501) and closes: the
    /// rest of the connection's bytes cannot be trusted to start a new request. The attempt is
    /// recorded, so it shows in the capture with its reason.
    private func refuseFraming(_ refusal: FramingRefusal, head: HTTPRequestHead, recorder: ExchangeRecorder) {
        let failure: ProxyFailure = refusal.statusCode == 501 ? .notImplemented(reason: refusal.reason)
            : .badRequest(reason: refusal.reason)
        var recorder = recorder
        services.sink.record(recorder.finish(error: failure.message))
        answer(failure, version: head.version, keepAlive: false, requestEnded: false)
    }

    private func answerLocally(_ request: ClientRequest, _ answer: LocalAnswerExchange.Answer, recorder: ExchangeRecorder) {
        let local = LocalAnswerExchange(client: self, services: services, request: request, answer: answer,
                                        recorder: recorder)
        state = .answering(local)
        local.start()
    }

}
