import Foundation
import NIOCore
import NIOHTTP1
import ProxyCore
import ProxyModel
import Rules

/// The client handler's own answers (built-in pages, failures) and the switch to a byte relay
/// or a tunnel's sniffer: the parts of `ClientHTTPHandler` that replace forwarding.
extension ClientHTTPHandler {
    func answerBuiltInPage(_ pathAndQuery: String, head: HTTPRequestHead) {
        let page = BuiltInPages.page(for: pathAndQuery, method: head.method,
                                     rootCertificate: services.configuration.rootCertificate,
                                     proxyAddress: context?.channel.localAddress,
                                     userAgent: head.headers.first(name: "User-Agent"))
        // HEAD: the GET answer's head (its Content-Length), no body.
        writeCompleteResponse(status: page.status, contentType: page.contentType,
                              body: head.method == .HEAD ? [] : page.body, contentLength: page.body.count,
                              version: head.version, keepAlive: head.isKeepAlive, requestEnded: false,
                              extraHeaders: page.extraHeaders)
    }

    /// Answers with a failure the proxy produced itself: its status and one-line reason.
    func answer(_ failure: ProxyFailure, version: HTTPVersion, keepAlive: Bool, requestEnded: Bool) {
        answer(failure, version: version, keepAlive: keepAlive, requestEnded: requestEnded, extraHeaders: [])
    }

    func answer(_ failure: ProxyFailure, version: HTTPVersion, keepAlive: Bool, requestEnded: Bool,
                extraHeaders: [(String, String)]) {
        writeCompleteResponse(status: HTTPResponseStatus(statusCode: failure.statusCode),
                      contentType: "text/plain; charset=utf-8", body: Array((failure.message + "\n").utf8),
                      version: version, keepAlive: keepAlive, requestEnded: requestEnded,
                      extraHeaders: [("Proxy-Status", failure.proxyStatusHeader)] + extraHeaders)
    }

    /// A whole response of the proxy's own: head, body and end, with `Content-Length` (the
    /// body's, unless `contentLength` says otherwise: a HEAD answer).
    func writeCompleteResponse(status: HTTPResponseStatus, contentType: String, body: [UInt8], contentLength: Int? = nil,
                               version: HTTPVersion, keepAlive: Bool, requestEnded: Bool,
                               extraHeaders: [(String, String)] = []) {
        guard let context else { return }
        var headers = HTTPHeaders(extraHeaders)
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(contentLength ?? body.count))
        let close = !keepAlive || inputClosed
        headers.add(name: "Connection", value: close ? "close" : "keep-alive")
        let responseVersion = version.major == 1 && version.minor == 0 ? HTTPVersion.http1_0 : .http1_1
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: responseVersion, status: status, headers: headers))),
                      promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        completeResponse(trailers: nil, close: close, requestEnded: requestEnded)
    }

    /// A block rule refuses the CONNECT: its status with the reason in `Proxy-Status` (a CONNECT
    /// response carries no body), recorded as a tunnel flow that never opened.
    func refuseConnect(_ head: HTTPRequestHead, host: String, port: Int, rule: AppliedRule<BlockAction>) {
        var flow = Flow(kind: .tunnel, clientAddress: clientAddress, startedAt: Date(), method: "CONNECT", scheme: "tcp",
                        host: host, port: port, path: "", httpVersion: ExchangeRecorder.versionText(head.version),
                        requestHeaders: ExchangeRecorder.requestFields(head.headers))
        // A 2xx or 3xx answer to a CONNECT would tell the client its tunnel is open.
        let code = rule.action.status >= 400 ? rule.action.status : 403
        let status = HTTPResponseStatus(statusCode: code)
        flow.status = code
        flow.reason = status.reasonPhrase
        flow.appliedRules = [rule.name]
        flow.note = "blocked by rule '\(rule.name)'"
        flow.finishedAt = Date()
        services.sink.record(flow)
        var headers = HTTPHeaders(rule.action.headers.map { ($0.name, $0.value) })
        headers.add(name: "Proxy-Status", value: ProxyFailure.proxyStatusHeader(
            error: "http_request_denied", details: "blocked by rule '\(rule.name)'"))
        writeCompleteResponse(status: status, contentType: "text/plain; charset=utf-8",
                              body: Array((rule.action.body ?? "blocked by ProxyApp rule '\(rule.name)'\n").utf8),
                              // Nothing can follow a CONNECT on this connection (the decoder stops there).
                              version: head.version, keepAlive: false, requestEnded: false,
                              extraHeaders: headers.map { ($0.name, $0.value) })
    }

    // MARK: switching to a byte relay

    /// Replaces the HTTP handlers with glue to `upstream` (after `101 Switching Protocols`).
    func switchToRawBytes(upstream: any Channel, meter: TunnelMeter?) {
        let (clientGlue, serverGlue) = GlueHandler.matchedPair(meter: meter)
        do {
            try UpstreamHTTPHandler.removePipeline(from: upstream, replacingWith: serverGlue)
        } catch {
            upstream.close(promise: nil)
            abortConnection()
            return
        }
        switchToRawBytes(glue: clientGlue)
    }

    /// Replaces the client's HTTP handlers with `glue`; bytes the HTTP decoder had already read
    /// past the request are handed on to it, never dropped.
    func switchToRawBytes(glue: GlueHandler) {
        switchToHandler(glue) { glue.flushPartner() }
    }

    /// Replaces the client's HTTP handlers with `handler` (bytes the decoder holds go to it).
    func switchToHandler(_ handler: any ChannelHandler, handedOver: @escaping () -> Void = {}) {
        stopDispatching()
        guard let context else { return }
        do {
            try ClientPipelineSetup.replaceHTTPHandlers(in: context, with: handler, handedOver: handedOver)
        } catch {
            context.close(promise: nil)
        }
    }
}
