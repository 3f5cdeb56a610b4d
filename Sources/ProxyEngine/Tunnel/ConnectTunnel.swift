import Foundation
import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel

/// Carries out one CONNECT request: opens the TCP connection to the target, answers
/// `200 Connection established`, then turns both connections into a byte relay and records the
/// tunnel as a flow when it closes.
///
/// This is the switch point the HTTPS-interception work plugs into: instead of gluing right
/// away, it will peek at the client's first bytes and decide between relaying and decrypting.
final class ConnectTunnel {
    private unowned let client: HTTPProxyHandler
    private let services: ProxyServices
    private let clientVersion: HTTPVersion
    private let host: String
    private let port: Int
    private var flow: Flow
    private var upstream: (any Channel)?
    private var requestEnded = false
    private var finished = false

    init(client: HTTPProxyHandler, services: ProxyServices, head: HTTPRequestHead, host: String, port: Int,
         clientAddress: String) {
        self.client = client
        self.services = services
        self.clientVersion = head.version
        self.host = host
        self.port = port
        self.flow = Flow(
            kind: .tunnel, clientAddress: clientAddress, startedAt: Date(), method: "CONNECT", scheme: "tcp",
            host: host, port: port, path: "", httpVersion: ExchangeRecorder.versionText(head.version),
            requestHeaders: ExchangeRecorder.fields(head.headers))
    }

    func start() {
        services.connector.connect(host: host, port: port, kind: .raw, on: client.eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let (channel, timings)):
                    guard !self.finished else {
                        channel.close(promise: nil)
                        return
                    }
                    self.upstream = channel
                    self.flow.timings.dns = timings.dns
                    self.flow.timings.connect = timings.connect
                    self.establishIfReady()
                case .failure(let error):
                    guard !self.finished else { return }
                    self.finished = true
                    let failure = error as? ProxyFailure
                        ?? .connectFailed(host: self.host, port: self.port, reason: "\(error)")
                    self.flow.error = failure.message
                    self.flow.finishedAt = Date()
                    self.services.sink.record(self.flow)
                    self.client.answer(failure, version: self.clientVersion, keepAlive: false, requestEnded: self.requestEnded)
                }
            }
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
        guard requestEnded, let upstream, !finished else { return }
        finished = true
        let established = HTTPResponseStatus.custom(code: 200, reasonPhrase: "Connection established")
        client.write(.head(HTTPResponseHead(version: clientVersion, status: established)))
        client.write(.end(nil))
        client.flush()

        var flow = self.flow
        flow.status = 200
        flow.reason = established.reasonPhrase
        let sink = services.sink
        let meter = TunnelMeter { meter in
            flow.bytesUp = meter.bytesUp
            flow.bytesDown = meter.bytesDown
            flow.finishedAt = Date()
            if let error = meter.firstError {
                flow.error = "tunnel closed with an error: \(error)"
            }
            sink.record(flow)
        }
        let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: meter)
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
