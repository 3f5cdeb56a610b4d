import BodyCodec
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import ProxyModel

/// The request handler of `TestOrigin`: records every request in the `OriginLog` and answers by
/// route.
///
/// Routes (every response carries `X-Origin-URI` and `X-Origin-Connection`):
/// - `/bytes/N`: N bytes of `PatternBytes` with `Content-Length`, streamed with back-pressure.
/// - `/chunked/N`: the same bytes with chunked framing, in 16 KiB chunks.
/// - `/echo`: the request body back (empty when larger than `keptBodyBytes`), with
///   `X-Echo-Method`, `X-Echo-Body-Length` and `X-Echo-Body-Checksum`.
/// - `/expect`: like `/echo`, but first answers `100 Continue` to `Expect: 100-continue`.
/// - `/status/N`: status N with an empty body.
/// - `/gzip/N`: `GzipText.lines(N)` as `text/plain`, sent with `Content-Encoding: gzip`.
/// - `/headers`: the request headers as `name: value` lines, in order.
/// - `/hop-response`: a response with hop-by-hop headers (`Connection: X-Resp-Hop`, …)
///   and two `Set-Cookie` headers.
/// - `/garbage`: answers with bytes that are not HTTP.
/// - `/bad-chunk`: a chunked 200 whose first chunk `ok` is followed by a malformed chunk size,
///   all in one write.
/// - `/slow-headers`: never answers.
/// - `/close-mid/N`: announces N bytes, sends half, closes.
/// - `/then-close/N`: N bytes, then closes the connection without announcing it.
/// - `/upgrade`: `101 Switching Protocols` to `Upgrade: websocket`, then echoes raw bytes.
/// - `/upgrade-greet`: the same, with `greeting` sent in the same write as the 101.
/// - `/trailers`: `hello` with trailers `grpc-status: 0` and `grpc-message: all good`.
/// - `/reset`: no answer; the stream is reset (HTTP/2) or the connection closed (HTTP/1).
/// - `/goaway`: over HTTP/2, GOAWAY naming this stream as the last, then `bye` on it.
final class OriginHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Body bytes kept per request (for `/echo` and `OriginLog.Request.bodyPrefix`).
    static let keptBodyBytes = 1 << 20

    /// A response body being streamed out as the channel stays writable.
    private struct Stream {
        var offset = 0
        var remaining: Int
        var chunkSize: Int
        /// Close the connection once the bytes are written (instead of ending the message).
        var closeInsteadOfEnd: Bool
        var closeAfterEnd: Bool
    }

    private let log: OriginLog
    private let connection: Int
    private var head: HTTPRequestHead?
    private var bodyLength = 0
    private var checksum = Checksum()
    private var bodyPrefix = Data()
    private var stream: Stream?
    private var pumping = false
    private var inputClosed = false

    init(log: OriginLog, connection: Int) {
        self.log = log
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyLength = 0
            checksum = Checksum()
            bodyPrefix = Data()
            if route(of: head).name == "expect",
               head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                let informational = HTTPResponseHead(version: .http1_1, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(informational)), promise: nil)
            }
        case .body(let buffer):
            bodyLength += buffer.readableBytes
            checksum.update(buffer)
            let room = Self.keptBodyBytes - bodyPrefix.count
            if room > 0 {
                buffer.withUnsafeReadableBytes { bodyPrefix.append(contentsOf: $0.prefix(room)) }
            }
        case .end:
            guard let head else { return }
            self.head = nil
            log.append(OriginLog.Request(
                method: head.method.rawValue, uri: head.uri, version: "HTTP/\(head.version.major).\(head.version.minor)",
                headers: head.headers.map { HeaderField(name: $0.name, value: $0.value) },
                bodyLength: bodyLength, bodyChecksum: checksum, bodyPrefix: bodyPrefix, connection: connection))
            respond(to: head, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            pump(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Like a real server: a client that half-closes gets the response in progress, then the
    /// connection closes (at once when nothing is in progress or nothing will be answered).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, case .inputClosed = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        inputClosed = true
        if stream == nil {
            context.close(promise: nil)
        }
    }

    // MARK: routes

    private func route(of head: HTTPRequestHead) -> (name: String, number: Int?) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        return (parts.first.map(String.init) ?? "", parts.count > 1 ? Int(parts[1]) : nil)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "X-Origin-URI", value: head.uri)
        headers.add(name: "X-Origin-Connection", value: String(connection))
        let isHead = head.method == .HEAD
        let route = route(of: head)
        switch (route.name, route.number) {
        case ("bytes", let count?), ("then-close", let count?):
            headers.add(name: "Content-Type", value: "application/octet-stream")
            headers.add(name: "Content-Length", value: String(count))
            startStream(Stream(remaining: isHead ? 0 : count, chunkSize: 64 << 10, closeInsteadOfEnd: false,
                               closeAfterEnd: route.name == "then-close"),
                        status: .ok, headers: headers, context: context)
        case ("chunked", let count?):
            headers.add(name: "Content-Type", value: "application/octet-stream")
            headers.add(name: "Transfer-Encoding", value: "chunked")
            startStream(Stream(remaining: isHead ? 0 : count, chunkSize: 16 << 10, closeInsteadOfEnd: false,
                               closeAfterEnd: false),
                        status: .ok, headers: headers, context: context)
        case ("close-mid", let count?):
            headers.add(name: "Content-Length", value: String(count))
            startStream(Stream(remaining: count / 2, chunkSize: 64 << 10, closeInsteadOfEnd: true, closeAfterEnd: false),
                        status: .ok, headers: headers, context: context)
        case ("echo", _), ("expect", _):
            headers.add(name: "X-Echo-Method", value: head.method.rawValue)
            headers.add(name: "X-Echo-Body-Length", value: String(bodyLength))
            headers.add(name: "X-Echo-Body-Checksum", value: checksum.hex)
            let body = bodyLength <= Self.keptBodyBytes ? bodyPrefix : Data()
            writeComplete(status: .ok, headers: headers, body: body, context: context)
        case ("status", let code?):
            let status = HTTPResponseStatus(statusCode: code)
            if status.mayHaveResponseBody {
                headers.add(name: "Content-Length", value: "0")
            }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                          promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case ("gzip", let count?):
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.add(name: "Content-Encoding", value: "gzip")
            let body = (try? BodyEncoder.encode(GzipText.lines(count), as: .gzip)) ?? []
            writeComplete(status: .ok, headers: headers, body: Data(body), context: context)
        case ("headers", _):
            let text = head.headers.map { "\($0.name): \($0.value)\n" }.joined()
            headers.add(name: "Content-Type", value: "text/plain")
            writeComplete(status: .ok, headers: headers, body: Data(text.utf8), context: context)
        case ("hop-response", _):
            headers.add(name: "Connection", value: "X-Resp-Hop")
            headers.add(name: "X-Resp-Hop", value: "secret")
            headers.add(name: "Keep-Alive", value: "timeout=5")
            headers.add(name: "X-End-To-End", value: "kept")
            headers.add(name: "Set-Cookie", value: "a=1; Path=/")
            headers.add(name: "Set-Cookie", value: "b=2; Path=/")
            writeComplete(status: .ok, headers: headers, body: Data("ok".utf8), context: context)
        case ("garbage", _):
            // Not HTTP at all: what a misconfigured or non-HTTP upstream sends.
            let channel = context.channel
            switchToEcho(context: context).whenComplete { _ in
                channel.writeAndFlush(ByteBuffer(string: "SSH-2.0-NotHTTP\r\n\r\n"), promise: nil)
            }
        case ("bad-chunk", _):
            let channel = context.channel
            switchToEcho(context: context).whenComplete { _ in
                channel.writeAndFlush(ByteBuffer(string: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                                 + "2\r\nok\r\nFFFFFFFFFFFFFFFFFFFF1\r\n"), promise: nil)
            }
        case ("slow-headers", _):
            break  // never answer; the connection stays open until the peer or shutdown closes it
        case ("upgrade", _) where head.headers["upgrade"].contains { $0.lowercased() == "websocket" }:
            upgrade(headers: headers, context: context)
        case ("upgrade-greet", _) where head.headers["upgrade"].contains { $0.lowercased() == "websocket" }:
            upgradeWithGreeting(headers: headers, context: context)
        case ("trailers", _):
            headers.add(name: "Content-Type", value: "application/grpc")
            headers.add(name: "Transfer-Encoding", value: "chunked")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                          promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "hello")))), promise: nil)
            let trailers: HTTPHeaders = ["grpc-status": "0", "grpc-message": "all good"]
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
        case ("reset", _):
            context.close(promise: nil)
        case ("goaway", _):
            if let parent = context.channel.parent,
               let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
                let goAway = HTTP2Frame(streamID: .rootStream,
                                        payload: .goAway(lastStreamID: id, errorCode: .noError, opaqueData: nil))
                parent.writeAndFlush(goAway, promise: nil)
            }
            writeComplete(status: .ok, headers: headers, body: Data("bye".utf8), context: context)
        default:
            writeComplete(status: .notFound, headers: headers, body: Data("no route for \(head.uri)\n".utf8),
                          context: context)
        }
    }

    private func writeComplete(status: HTTPResponseStatus, headers: HTTPHeaders, body: Data,
                               context: ChannelHandlerContext) {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                      promise: nil)
        if !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))),
                          promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    // MARK: streaming with back-pressure

    private func startStream(_ stream: Stream, status: HTTPResponseStatus, headers: HTTPHeaders,
                             context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                      promise: nil)
        self.stream = stream
        pump(context: context)
    }

    /// Writes chunks while the channel is writable; resumes from `channelWritabilityChanged`.
    ///
    /// `flush()` can report writability synchronously and so call back in here: the state lives
    /// in `self.stream` only, and a nested call returns at once.
    private func pump(context: ChannelHandlerContext) {
        guard !pumping, stream != nil else { return }
        pumping = true
        defer { pumping = false }
        while let current = stream, current.remaining > 0, context.channel.isWritable {
            let count = min(current.chunkSize, current.remaining)
            var buffer = context.channel.allocator.buffer(capacity: count)
            PatternBytes.write(offset: current.offset, count: count, into: &buffer)
            stream?.offset += count
            stream?.remaining -= count
            log.streamed(count)
            // Flushed part by part: over TLS, unflushed writes wait inside NIOSSL, where the
            // channel's writability does not see them, and the whole body would be "streamed".
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        guard let finished = stream, finished.remaining == 0 else { return }
        stream = nil
        let channel = context.channel
        if finished.closeInsteadOfEnd {
            // An empty write whose completion means every byte before it left the channel.
            let done = context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer()))))
            done.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        let ended = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if finished.closeAfterEnd || inputClosed {
            ended.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    // MARK: upgrade

    /// Answers 101, then replaces the HTTP handlers with a `ByteEchoHandler`; bytes the decoder
    /// read past the request go to the echo handler.
    private func upgrade(headers: HTTPHeaders, context: ChannelHandlerContext) {
        var headers = headers
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Connection", value: "Upgrade")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .switchingProtocols,
                                                              headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            self.switchToEcho(context: context)
        }
    }

    /// A server that speaks first: the 101 and the first bytes of the new protocol leave in one
    /// write (one TCP segment on loopback), so the proxy reads them together.
    private func upgradeWithGreeting(headers: HTTPHeaders, context: ChannelHandlerContext) {
        var text = "HTTP/1.1 101 Switching Protocols\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        text += "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + Self.greeting
        let channel = context.channel
        let bytes = ByteBuffer(string: text)
        switchToEcho(context: context).whenComplete { _ in
            channel.writeAndFlush(bytes, promise: nil)
        }
    }

    /// What `/upgrade-greet` sends right after its 101.
    static let greeting = "hello-from-origin"

    /// Takes every HTTP handler off and leaves a `ByteEchoHandler`; the future completes once
    /// the decoder (removed last, so its leftover bytes reach the echo handler) is gone.
    @discardableResult
    private func switchToEcho(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let pipeline = context.pipeline.syncOperations
        let removed = context.eventLoop.makePromise(of: Void.self)
        do {
            try pipeline.addHandler(ByteEchoHandler())
            if let upgradeHandler = try? pipeline.handler(type: HTTPServerUpgradeHandler.self) {
                pipeline.removeHandler(upgradeHandler, promise: nil)
            }
            if let validator = try? pipeline.handler(type: NIOHTTPResponseHeadersValidator.self) {
                pipeline.removeHandler(validator, promise: nil)
            }
            pipeline.removeHandler(try pipeline.handler(type: HTTPServerPipelineHandler.self), promise: nil)
            pipeline.removeHandler(try pipeline.handler(type: HTTPServerProtocolErrorHandler.self), promise: nil)
            pipeline.removeHandler(try pipeline.handler(type: HTTPResponseEncoder.self), promise: nil)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(decoder, promise: removed)
        } catch {
            removed.fail(error)
            context.close(promise: nil)
        }
        return removed.futureResult
    }
}
