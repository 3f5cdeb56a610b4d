import NIOCore
import NIOHTTP1
import ProxyCore

/// How a forwarded exchange gets its upstream connection (the client's private one, a pooled
/// one, or a new one) and sends the request on it.
///
/// The properties this touches are internal only for this file; nothing else sets them.
extension ForwardExchange {
    func start() {
        // A request whose body is held is sent only once it is whole: an upstream connection
        // taken now would sit idle meanwhile (and the origin may close it).
        if heldRequest != nil {
            startDeferred = true
            return
        }
        if let (channel, handler) = client.privateUpstreams.checkout(key) {
            usingPooledConnection = true
            connectionBound = true
            attach(channel: channel, handler: handler, timings: .reused)
        } else if let (channel, handler) = pool.checkout(key) {
            usingPooledConnection = true
            attach(channel: channel, handler: handler, timings: .reused)
        } else {
            connectFresh()
        }
    }

    func connectFresh() {
        client.setReadsPaused(true, by: .connecting)
        let eventLoop = client.eventLoop
        services.connector.connect(host: key.host, port: key.port, addresses: addresses, kind: .http, tls: upstreamTLS,
                                   on: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                // The client may have left while connecting (`clientClosed` finished us); its
                // handler can be gone by now, so nothing may touch `client` then.
                guard !self.finished else {
                    if case .success(let (channel, _)) = result { channel.close(promise: nil) }
                    return
                }
                self.client.setReadsPaused(false, by: .connecting)
                switch result {
                case .success(let (channel, timings)):
                    guard let handler = try? channel.pipeline.syncOperations.handler(type: UpstreamHTTPHandler.self)
                    else {
                        channel.close(promise: nil)
                        self.fail(.connectFailed(host: self.key.host, port: self.key.port, reason: "no HTTP pipeline"))
                        return
                    }
                    self.attach(channel: channel, handler: handler, timings: timings)
                case .failure(let error):
                    self.fail(error as? ProxyFailure ?? .connectFailed(host: self.key.host, port: self.key.port, reason: SystemErrorText.describe(error, peer: .server)))
                }
            }
    }

    func attach(channel: any Channel, handler: UpstreamHTTPHandler, timings: UpstreamConnectTimings) {
        upstream = (channel, handler)
        handler.delegate = self
        recorder.upstreamConnected(timings, tls: handler.tlsSession, serverAddress: handler.serverAddress)
        guard heldRequest == nil else { return }  // the head goes with the rewritten body
        sendRequestSoFar(on: handler)
    }

    /// Sends the head and whatever of the request arrived before the connection was up.
    func sendRequestSoFar(on handler: UpstreamHTTPHandler) {
        handler.send(.head(upstreamHead))
        for part in pendingParts {
            handler.send(part)
        }
        pendingParts.removeAll()
        if requestEnded {
            handler.send(.end(requestTrailers))
            markRequestWritten()
        }
        handler.flush()
    }

    func markRequestWritten() {
        requestFullyWritten = true
        recorder.requestFullySent()
    }
}
