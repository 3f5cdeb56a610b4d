import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// Where a request goes: the rules run on it (`RequestRouting`), and what they decided is
/// reported to the machine: answered here (block, map-local), refused, or forwarded — maybe
/// elsewhere (map-remote, dns) and with edits (rewrite).
extension ExchangeDriver {
    /// Where the client asked the request to go (before any rule).
    struct RequestedDestination {
        var scheme: String
        var host: String
        var port: Int
        var pathAndQuery: String
        /// The client side's TLS (nil for plain HTTP).
        var clientTLS: TLSDetails?
        /// The client's own `Host` inside a tunnel (virtual hosts); nil: the URL's authority.
        var clientAuthority: String?
    }

    /// The request head was read: framing first (a request whose body could be read two ways
    /// never reaches rules or origin), then the rules.
    func start(_ destination: RequestedDestination) {
        self.destination = destination
        perform(machine.start(fields: upstreamHead.headers))
    }

    func route() {
        guard let destination, let framing = machine.requestFraming else { return }
        let head = upstreamHead
        let request = ClientRequest(
            head: head, scheme: destination.scheme, host: destination.host, port: destination.port,
            pathAndQuery: destination.pathAndQuery,
            authority: destination.clientAuthority
                ?? Self.authority(host: destination.host, port: destination.port, scheme: destination.scheme),
            framing: framing)
        switch RequestRouting.decide(request, rules: client.ignoresRules ? RuleSet() : services.rules.current,
                                     upstream: services.configuration.upstreamProxies,
                                     throttle: client.ignoresRules ? nil : services.configuration.throttle) {
        case .block(let rule):
            recorder.applied(rule: rule.name, note: nil)
            localAnswer = .block(rule)
            perform(machine.routeDecided(.answerLocally(needsPreparation: false)))
        case .mapLocal(let rule, let facts):
            recorder.applied(rule: rule.name, note: nil)
            let lookup = LocalFileLookup.file(for: rule.action, request: facts, condition: rule.path)
            localAnswer = .file(rule, lookup)
            var needsFile = false
            if case .file = lookup {
                needsFile = true
                workCancellation = WorkCancellation()
            }
            perform(machine.routeDecided(.answerLocally(needsPreparation: needsFile)))
        case .forward(let target):
            if target.scheme == "https" {
                // Only the upstream policy: copying the whole `TLSInterception` here (its
                // references retained and released per request) was 0.17 % of the samples.
                guard let upstreamPolicy = services.interception?.upstream else {
                    let reason = destination.scheme == "https" ? "HTTPS interception is off"
                        : "map_remote to an https:// URL needs HTTPS interception (run without --no-intercept)"
                    perform(machine.routeDecided(.refuse(.notImplemented(reason: reason))))
                    return
                }
                let isIP = HostName.isIPAddress(target.host)  // no SNI for an address (RFC 6066 §3)
                let sameHost = target.host == destination.host
                upstreamTLS = UpstreamTLSSettings(
                    policy: upstreamPolicy,
                    serverName: (sameHost ? destination.clientTLS?.sni : nil) ?? (isIP ? nil : target.host),
                    offersHTTP2: Self.offersHTTP2(clientVersion: clientVersion, asksUpgrade: machine.request.asksUpgrade,
                                                  method: request.head.method,
                                                  forHTTP1Clients: upstreamPolicy.http2ForHTTP1Clients))
            }
            forward(request, to: target)
        }
    }

    /// Whether the origin is offered HTTP/2: for a client that speaks it, and for any client
    /// with `--origin-http2 always` (`UpstreamTLSPolicy.http2ForHTTP1Clients`). An upgrade
    /// (WebSocket) or CONNECT needs HTTP/1.1 either way.
    static func offersHTTP2(clientVersion: HTTPVersion, asksUpgrade: Bool, method: HTTPMethod, forHTTP1Clients: Bool) -> Bool {
        (clientVersion.major >= 2 || forHTTP1Clients) && !asksUpgrade && method != .CONNECT
    }

    /// Whether the client's own choice of host and port stands: a rule the operator wrote
    /// (map_remote, dns) may point anywhere, local services included; a guarded client may not.
    static func goesWhereAsked(_ request: ClientRequest, _ target: UpstreamDestination) -> Bool {
        target.addresses == nil && target.host == request.host && target.port == request.port
    }

    /// Prepares the request as forwarded (hop-by-hop fields gone, the target's `Host`, exactly
    /// one framing field, a rewrite rule's header edits) and starts forwarding it.
    private func forward(_ request: ClientRequest, to target: UpstreamDestination) {
        addresses = target.addresses
        key = .init(host: target.host, port: target.port, tls: upstreamTLS != nil, serverName: upstreamTLS?.serverName,
                    addressOverride: target.addresses?.joined(separator: ","),
                    guardsInternal: client.destinationGuard != nil && Self.goesWhereAsked(request, target),
                    via: target.upstreamProxy, throttle: target.throttle, offersHTTP2: upstreamTLS?.offersHTTP2 ?? false)
        for name in target.appliedRules {
            recorder.applied(rule: name, note: nil)
        }
        for note in target.notes {
            recorder.applied(rule: nil, note: note)
        }
        var (headers, upgrade) = Self.upstreamHeaders(from: request.head.headers, authority: target.authority,
                                                      framing: request.framing)
        if clientVersion.major >= 2 { headers = Self.joiningCookies(headers) }
        var headersEdited = false
        if let rule = target.rewrite {
            let rewriter = ExchangeRewriter(rule: rule, limit: max(services.configuration.maxCapturedBodyBytes, 1 << 20))
            self.rewriter = rewriter
            workCancellation = WorkCancellation()
            let before = ExchangeRecorder.fields(headers)
            rewriter.editRequestHeaders(&headers)
            headersEdited = ExchangeRecorder.fields(headers) != before
        }
        // A breakpoint filter that rules the response out already spares it the hold's path.
        // (Asked only with a filter set: reading `recorder.flow` here copies the whole flow.)
        let verdict = upgrade || !services.breakpoints.isActive ? nil
            : services.breakpoints.verdict(onRequest: recorder.flow)
        let stopsRequest = verdict?.holdsRequest ?? false
        if stopsRequest { rareState.breakpointOnRequest = true }
        if verdict?.holdsResponse == true { rareState.breakpointResponseForecast = true }
        let actions = machine.routeDecided(.forward(.init(
            host: key.host, port: key.port, forwardsUpgrade: upgrade,
            holdsRequest: (rewriter?.holdsRequestBody ?? false) || stopsRequest,
            mayHoldResponse: !(rewriter?.action.responseBody.isEmpty ?? true) || (verdict != nil && verdict?.holdsResponse != false))))
        if machine.holdsRequest {
            rareState.heldRequest = HeldBody(limit: rewriter?.limit ?? heldBodyLimit)
            // The body is sent only once it is whole: nothing for the origin to continue.
            headers.remove(name: "expect")
        }
        upstreamHead = HTTPRequestHead(version: .http1_1, method: request.head.method, uri: target.pathAndQuery,
                                       headers: headers)
        requestChanged = headersEdited || Self.routedElsewhere(request, target)
        if requestChanged { recordForwardedRequest(body: nil) }
        perform(actions)
    }
}
