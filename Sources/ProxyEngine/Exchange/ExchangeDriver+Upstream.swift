import NIOCore
import NIOHTTP1
import ProxyCore

/// The upstream connection: taken (the client's bound one, a pooled one) or opened, given back
/// or closed when the machine says so, and what its handler reports turned into events.
extension ExchangeDriver {
    func openUpstream(allowReuse: Bool) {
        if allowReuse {
            if let (channel, handler) = client.privateUpstreams.checkout(key) {
                attach(channel: channel, handler: handler, timings: .reused)
                perform(machine.upstreamConnected(reused: true, boundToClient: true))
                return
            }
            if upstreamTLS?.offersHTTP2 == true, let connection = pool.multiplexedConnection(key) {
                perform(machine.upstreamConnecting())
                openStream(on: connection, timings: .reused, reused: true)
                return
            }
            if let (channel, handler) = pool.checkout(key) {
                attach(channel: channel, handler: handler, timings: .reused)
                perform(machine.upstreamConnected(reused: true))
                return
            }
        }
        perform(machine.upstreamConnecting())
        dial(sharingHTTP2: allowReuse && upstreamTLS?.offersHTTP2 == true)
    }

    /// Opens a new connection, or, to an origin known to speak HTTP/2 while a connection to it is
    /// being opened, waits for that one and takes a stream on it.
    private func dial(sharingHTTP2: Bool) {
        var leads = false
        if sharingHTTP2 {
            let wait = pool.awaitHTTP2Dial(key) { connection in
                if let connection, connection.hasCapacity {
                    self.openStream(on: connection, timings: .reused, reused: true)
                } else {
                    self.dial(sharingHTTP2: true)
                }
            }
            if wait.queued { return }
            leads = wait.leads
        }
        services.connector.connect(host: key.host, port: key.port, addresses: addresses, kind: .http, tls: upstreamTLS,
                                   refusingInternal: key.guardsInternal ? client.destinationGuard : nil,
                                   via: key.via, on: client.eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                let channel = try? result.get().0
                self.afterNewConnection(channel) { self.connected(result, leads: leads) }
            }
    }

    /// A new connection (or its failure) for this exchange. The exchange may have finished
    /// meanwhile (the client left): the machine then answers a late connection with
    /// `closeUpstream` and touches nothing else.
    private func connected(_ result: Result<(any Channel, UpstreamConnectTimings), any Error>, leads: Bool) {
        switch result {
        case .success(let (channel, timings)):
            if let connection = UpstreamHTTP2Connection.on(channel) {
                useNewHTTP2Connection(connection, timings: timings, leads: leads)
                return
            }
            if leads { pool.finishHTTP2Dial(key, connection: nil) }
            guard let handler = try? channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self) else {
                channel.close(promise: nil)
                perform(machine.upstreamConnectFailed(.connectFailed(host: key.host, port: key.port, reason: "no HTTP pipeline")))
                return
            }
            attach(channel: channel, handler: handler, timings: timings)
            perform(machine.upstreamConnected(reused: false))
        case .failure(let error):
            if leads { pool.finishHTTP2Dial(key, connection: nil) }
            perform(machine.upstreamConnectFailed(
                error as? ProxyFailure
                    ?? .connectFailed(host: key.host, port: key.port, reason: SystemErrorText.describe(error, peer: .server))))
        }
    }

    /// The origin chose HTTP/2: once its SETTINGS are known, this exchange takes a stream, and
    /// later ones (those waiting first) share the connection.
    private func useNewHTTP2Connection(_ connection: UpstreamHTTP2Connection, timings: UpstreamConnectTimings,
                                       leads: Bool) {
        connection.ready.assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.pool.register(self.key, multiplexed: connection)
                self.openStream(on: connection, timings: timings, reused: false)
                if leads { self.pool.finishHTTP2Dial(self.key, connection: connection) }
            case .failure(let error):
                if leads { self.pool.finishHTTP2Dial(self.key, connection: nil) }
                connection.channel.close(promise: nil)
                // A silent origin (no SETTINGS for the upstream timeout) is a timeout, not a close.
                self.perform(self.machine.upstreamConnectFailed(error is UpstreamTimeoutError
                    ? Self.failure(for: error, host: self.key.host, port: self.key.port,
                                   timeout: self.services.configuration.upstreamTimeout)
                    : .connectFailed(host: self.key.host, port: self.key.port,
                                     reason: "the origin closed its HTTP/2 connection before its SETTINGS")))
            }
        }
    }

    /// A stream of an HTTP/2 connection carries this exchange as a connection of its own would.
    private func openStream(on connection: UpstreamHTTP2Connection, timings: UpstreamConnectTimings, reused: Bool) {
        connection.openStream().assumeIsolated().whenComplete { result in
            switch result {
            case .success(let (stream, handler)):
                self.attach(channel: stream, handler: handler, timings: timings)
                self.perform(self.machine.upstreamConnected(reused: reused, multiplexed: true))
            case .failure:
                self.perform(self.machine.upstreamConnectFailed(
                    .connectFailed(host: self.key.host, port: self.key.port,
                                   reason: "the origin's HTTP/2 connection took no new stream")))
            }
        }
    }

    private func attach(channel: any Channel, handler: UpstreamHTTPHandler, timings: UpstreamConnectTimings) {
        upstream = (channel, handler)
        handler.attach(self)
        if machine.phase == .forwarding {
            recorder.upstreamConnected(timings, tls: handler.tlsSession, serverAddress: handler.serverAddress)
        }
    }

    /// Back to the client's bound connections or the shared pool, once the read that ended the
    /// response is over (`UpstreamHTTPHandler.checkIn`).
    func checkInUpstream(boundToClient: Bool) {
        guard let (channel, handler) = upstream else { return }
        upstream = nil
        let key = key
        if boundToClient {
            let privateUpstreams = client.privateUpstreams
            handler.checkIn { privateUpstreams.checkin(key, channel: channel, handler: handler) }
        } else {
            handler.checkIn(to: pool, key: key)
        }
    }

    func closeUpstream() {
        guard let (_, handler) = upstream else { return }
        upstream = nil
        handler.detachAndClose()
    }

    /// The origin switched protocols: the response ends, and both connections become one relay.
    func switchToByteRelay() {
        guard let (channel, handler) = upstream else { return }
        upstream = nil
        handler.detach()
        client.write(.end(nil))
        client.flush()
        client.switchToRawBytes(upstream: channel, meter: webSocketMeter())
    }

    /// For a WebSocket recorded open: a meter whose observer captures its messages and which
    /// reports the byte counts when both sides closed.
    private func webSocketMeter() -> TunnelMeter? {
        guard let key = rare?.webSocketKey else { return nil }
        let capture = WebSocketCapture(
            key: key, sink: services.sink, payloadBudget: services.configuration.maxCapturedBodyBytes,
            extensions: originResponseHead?.headers.first(name: "sec-websocket-extensions"),
            makeInflater: WebSocketCapture.inflater(for:direction:))
        return TunnelMeter(observer: capture) { meter in
            var error: String?
            if let (failure, direction) = meter.firstError,
               !TunnelMeter.endsOrdinarily(failure, direction: direction, bytesUp: meter.bytesUp, bytesDown: meter.bytesDown) {
                error = "WebSocket closed with an error: "
                    + SystemErrorText.describe(failure, peer: direction == .up ? .client : .server)
            }
            capture.finish(bytesUp: meter.bytesUp, bytesDown: meter.bytesDown, error: error)
        }
    }

    // MARK: UpstreamHTTPHandlerDelegate

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        switch part {
        case .head(let head):
            if head.status == .proxyAuthenticationRequired, let proxy = key.via, proxy.scheme == .http, upstreamTLS == nil {
                // The upstream proxy's own login, not the origin's answer: passed on, it would
                // look like this proxy asking the client to log in.
                closeUpstream()
                perform(machine.upstreamFailed(.upstreamProxyFailed(
                    proxy: proxy.description,
                    reason: proxy.user == nil
                        ? "asks for a login (407): give it in the URL, \(proxy.loginExample)"
                        : "refused the login for user '\(proxy.user!)' (407)"), mayRetry: false))
                return
            }
            // Taken for every head, in order, so the origin's phrases stay matched to heads.
            originStatus = upstream?.handler.statusWithOriginPhrase(head.status) ?? head.status
            originResponseHead = head
            perform(machine.upstreamHead(
                status: Int(head.status.code), fields: head.headers, keepAlive: head.isKeepAlive,
                bindsConnection: Self.bindsConnection(request: upstreamHead.headers, response: head.headers)))
        case .body(let buffer):
            perform(machine.upstreamBody(), body: buffer)
        case .end(let trailers):
            responseTrailers = trailers.flatMap(TrailerFields.forwardable)
            if let responseTrailers, !responseTrailers.isEmpty { recorder.responseTrailers(responseTrailers) }
            perform(machine.upstreamEnd())
        }
    }

    func upstreamReadComplete() {
        perform(machine.upstreamReadComplete())
    }

    func upstreamWritabilityChanged(isWritable: Bool) {
        // Only a connection taking bytes again matters here: one that stops is noticed when a
        // body part is sent (`sendUpstream`).
        if isWritable {
            perform(machine.upstreamWritabilityChanged(isWritable: true))
        }
    }

    func upstreamFailed(_ error: any Error) {
        // The handler has let go of this exchange and closes the connection itself.
        upstream = nil
        perform(machine.upstreamFailed(
            Self.failure(for: error, host: key.host, port: key.port, timeout: services.configuration.upstreamTimeout),
            mayRetry: !(error is UpstreamTimeoutError)))
    }
}
