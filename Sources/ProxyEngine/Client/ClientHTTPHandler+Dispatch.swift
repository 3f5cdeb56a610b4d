import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
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
        if let reverse {
            startReverseRequest(head, target: target, reverse: reverse, pool: pool)
            return
        }
        if replay != nil {
            startReplayedRequest(head, target: target, pool: pool)
            return
        }
        if services.configuration.access.requiresAuthentication, isProxied(target), !authenticate(head) {
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
            if BuiltInPages.isReservedHost(host) || services.isOwnEndpoint(host: host, port: port) {
                answerBuiltInPage(pathAndQuery, head: head)
                return
            }
            forward(head, scheme: "http", host: host, port: port, pathAndQuery: pathAndQuery, clientTLS: nil, pool: pool)
        }
    }

    /// Whether `target` asks the proxy to go somewhere (and so needs `--auth`'s credentials);
    /// the proxy's own pages never do, however they are addressed: a phone opens the CA page
    /// before it has been given a password.
    private func isProxied(_ target: RequestTarget) -> Bool {
        switch target {
        case .origin: return false
        case .authority: return true
        case .absolute(_, let host, let port, _):
            return !BuiltInPages.isReservedHost(host) && !services.isOwnEndpoint(host: host, port: port)
        }
    }

    /// Checks the request's `Proxy-Authorization` against `--auth` and `--auth-file`; answers
    /// 407 (asking for Basic credentials) and returns false when they are missing or wrong. The
    /// field itself is hop-by-hop: it never reaches the origin, and the capture keeps it as
    /// `REDACTED`. An `--auth-file` login not yet known also returns false: reads pause while
    /// its hash is checked off the loop, then the request starts again with the verdict.
    private func authenticate(_ head: HTTPRequestHead) -> Bool {
        var outcome = checkedLogin ?? services.configuration.access.credentials.check(
            proxyAuthorization: head.headers["proxy-authorization"])
        checkedLogin = nil
        if case .needsHashCheck(let login) = outcome {
            switch services.passwordVerifier.remembered(login) {
            case .accepted?: outcome = .accepted(user: login.user)
            case .rejected?: outcome = .rejected(reason: ProxyCredentials.wrongLogin)
            case .busy?, nil:
                checkLogin(login, head: head)
                return false
            }
        }
        let reason: String
        switch outcome {
        case .accepted:
            return true
        case .missing:
            reason = "this proxy needs a user name and password (Proxy-Authorization: Basic)"
        case .rejected(let why):
            reason = why
            services.refusalLog.note("refused \(clientAddress): \(why) (--auth)")
        case .needsHashCheck:
            reason = ProxyCredentials.wrongLogin
        }
        let failure = ProxyFailure.proxyAuthenticationRequired(reason: reason)
        answer(failure, version: head.version, keepAlive: head.isKeepAlive, requestEnded: false,
               extraHeaders: [("Proxy-Authenticate", "Basic realm=\"ProxyApp\", charset=\"UTF-8\"")])
        return false
    }

    /// Checks `login` off the loop with reads paused; then the request starts again, its parts
    /// read meanwhile replayed in order.
    private func checkLogin(_ login: HashedLogin, head: HTTPRequestHead) {
        state = .authenticating(head, held: [])
        setReadsPausedForLogin(true)
        services.passwordVerifier.verify(login, on: eventLoop).assumeIsolated().whenSuccess { verdict in
            guard case .authenticating(let head, let held) = self.state, let context = self.context else { return }
            switch verdict {
            case .accepted: self.checkedLogin = .accepted(user: login.user)
            case .rejected: self.checkedLogin = .rejected(reason: ProxyCredentials.wrongLogin)
            case .busy: self.checkedLogin = .rejected(reason: "too many logins are being checked at once: try again")
            }
            self.state = .idle
            self.setReadsPausedForLogin(false)
            self.startRequest(head)
            for part in held { self.handle(part, context: context) }
        }
    }

    /// A request on a `--reverse` listener: to its origin, path and query as sent (the client
    /// thinks this is the origin, so no login is asked and no proxy page is served).
    private func startReverseRequest(_ head: HTTPRequestHead, target: RequestTarget, reverse: ReverseMapping,
                                     pool: UpstreamConnectionPool) {
        switch target {
        case .origin(let pathAndQuery), .absolute(_, _, _, let pathAndQuery):
            forward(head, scheme: reverse.scheme, host: reverse.host, port: reverse.port, pathAndQuery: pathAndQuery,
                    clientTLS: nil, pool: pool)
        case .authority:
            answer(.notImplemented(reason: "this port is a reverse proxy for \(reverse.origin): CONNECT is not served here "
                                   + "(use the proxy port)"),
                   version: head.version, keepAlive: false, requestEnded: false)
        }
    }

    /// A request read inside a CONNECT tunnel: it goes to the tunnel's target (an absolute-form
    /// request may name another host; the tunnel's scheme applies either way).
    private func startTunnelledRequest(_ head: HTTPRequestHead, target: RequestTarget, tunnel: TunnelDestination,
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
            forward(head, scheme: tunnel.scheme, host: tunnel.host, port: tunnel.port, pathAndQuery: pathAndQuery,
                    clientTLS: tunnel.tls?.details, pool: pool, clientAuthority: head.headers.soleHost().map(String.init))
        case .absolute(_, let host, let port, let pathAndQuery):
            forward(head, scheme: tunnel.scheme, host: host, port: port, pathAndQuery: pathAndQuery,
                    clientTLS: tunnel.tls?.details, pool: pool)
        case .authority:
            answer(.notImplemented(reason: "CONNECT inside a CONNECT tunnel is not supported"),
                   version: head.version, keepAlive: false, requestEnded: false)
        }
    }

    /// A request on a replay's in-process connection: absolute-form, to `http://` or `https://`
    /// directly (the engine opens the TLS a CONNECT tunnel would have carried), never a login
    /// asked nor a proxy page served; `x-proxyapp-replay-of` (trusted only here) links its flow
    /// to the original and is not forwarded.
    private func startReplayedRequest(_ head: HTTPRequestHead, target: RequestTarget, pool: UpstreamConnectionPool) {
        guard case .absolute(let scheme, let host, let port, let pathAndQuery) = target,
              scheme == "http" || scheme == "https" else {
            answer(.badRequest(reason: "a replayed request needs an absolute http:// or https:// URL"),
                   version: head.version, keepAlive: false, requestEnded: false)
            return
        }
        var head = head
        let original = head.headers.first(name: ReplaySettings.originalHeader).flatMap { Int64($0) }
        head.headers.remove(name: ReplaySettings.originalHeader)
        forward(head, scheme: scheme, host: host, port: port, pathAndQuery: pathAndQuery, clientTLS: nil, pool: pool,
                replayOf: original)
    }

    /// The HTTP/2 stream this handler serves (its channel is a stream channel), as a number.
    var http2StreamID: Int? {
        (try? context?.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { Int($0) }
    }

    /// Starts the exchange for a proxied request: its machine decides the framing, the rules
    /// decide where it goes (answered here, or forwarded, maybe elsewhere and with edits).
    private func forward(_ head: HTTPRequestHead, scheme: String, host: String, port: Int, pathAndQuery: String,
                         clientTLS: TLSDetails?, pool: UpstreamConnectionPool, clientAuthority: String? = nil,
                         replayOf: Int64? = nil) {
        let recorder = ExchangeRecorder(
            clientAddress: clientAddress, method: head.method.rawValue, scheme: scheme, host: host, port: port,
            path: pathAndQuery, version: head.version, headers: head.headers,
            cap: services.configuration.maxCapturedBodyBytes, spool: services.configuration.bodySpool,
            clientTLS: scheme == "https" ? clientTLS ?? TLSDetails() : nil,
            streamID: head.version.major == 2 ? http2StreamID : nil, replayOf: replayOf)
        let exchange = ExchangeDriver(client: self, services: services, pool: pool, head: head, recorder: consume recorder)
        state = .exchange(exchange)
        if inputClosed { exchange.clientInputClosed() }
        exchange.start(.init(scheme: scheme, host: host, port: port, pathAndQuery: pathAndQuery, clientTLS: clientTLS,
                             clientAuthority: clientAuthority))
    }
}
