import NIOCore
import NIOHTTP1
import NIOSSL
import ProxyCore

/// The one place that knows which handlers a client connection has, in which order, and how to
/// take the HTTP ones off when the connection becomes a byte relay. A listener connection gets
/// them once `ListenerPrefaceSniffer` saw it is not h2c.
///
/// ```
/// TLSWriteCoalescer           (after a TLS handler only) a head and a small body leave as one record
/// HTTPResponseEncoder         paired with the decoder: knows HEAD/CONNECT responses have no body
/// ByteToMessageHandler<HTTPRequestDecoder>   64 KiB header limit → 431; keeps bytes after CONNECT/upgrade
/// RequestEndReadAhead         keeps the socket registered for reads while a response is awaited
/// HTTPServerPipelineHandler   one request at a time: pipelined requests answered in order
/// HTTPServerUpgradeHandler    (no upgraders; only makes the decoder forward leftover bytes, then leaves)
/// ClientHTTPHandler           decides and carries out each request; closes idle connections
/// ```
///
/// A connection accepted beyond `--max-connections` gets none of these: only
/// `ConnectionLimitRefusalHandler`, which answers 503 and closes; one from an address the access
/// policy does not admit gets `ClientRefusalHandler`: a 403, or the SOCKS refusal if its first
/// byte says SOCKS.
enum ClientPipelineSetup {
    /// Sets up a connection the listener accepted: takes a slot from the connection limit and
    /// lets its first bytes choose SOCKS5, HTTP/1 or HTTP/2 with prior knowledge
    /// (`ListenerPrefaceSniffer`), or refuses the connection when no slot is free.
    /// A reverse listener's connections (`reverse`) are HTTP/1 only: no SOCKS, no h2c.
    static func configureAccepted(_ channel: any Channel, services: ProxyServices,
                                  reverse: ReverseMapping? = nil, tls: NIOSSLContext? = nil) throws {
        if case .refused(let reason) = admission(of: channel, services: services) {
            services.refusalLog.note("refused a connection from \(channel.remoteAddress?.ipAddress ?? "?"): \(reason)")
            var response = channel.allocator.buffer(capacity: 256)
            response.writeString(ClientRefusal.response(ProxyFailure.clientNotAllowed(reason: reason)))
            // Waiting for the first byte (to refuse in SOCKS or HTTP) holds a slot, so refused
            // clients cannot hold more descriptors than the limit; with none free, HTTP at once.
            if services.connectionLimit.admit(channel) {
                try channel.pipeline.syncOperations.addHandler(ClientRefusalHandler(httpResponse: response))
            } else {
                try channel.pipeline.syncOperations.addHandler(ConnectionLimitRefusalHandler(response: response))
            }
            return
        }
        guard services.connectionLimit.admit(channel) else {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionLimitRefusalHandler(response: services.connectionLimit.refusal))
            return
        }
        if let reverse {
            if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
            try configure(channel, services: services, reverse: reverse)
            return
        }
        try channel.pipeline.syncOperations.addHandler(ListenerPrefaceSniffer(services: services))
    }

    /// Whether the client's address may use the proxy at all (`ClientAccessPolicy.admit`);
    /// loopback clients are admitted without parsing their address.
    private static func admission(of channel: any Channel, services: ProxyServices) -> ClientAccessPolicy.Admission {
        guard let ip = channel.remoteAddress?.ipAddress, !ip.hasPrefix("127."), ip != "::1" else { return .admitted }
        return services.configuration.access.admit(client: IPAddressBytes(ip))
    }

    /// Adds the HTTP handlers at the end of `channel`'s pipeline; `tunnel` names the origin of
    /// the requests when the connection is a CONNECT tunnel carrying HTTP (decrypted or plain).
    static func configure(_ channel: any Channel, services: ProxyServices,
                          tunnel: ClientHTTPHandler.TunnelDestination? = nil, reverse: ReverseMapping? = nil,
                          replay: ReplaySettings? = nil) throws {
        let pipeline = channel.pipeline.syncOperations
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = services.configuration.maxRequestHeaderBytes
        limits.maxHeaderFieldSize = services.configuration.maxRequestHeaderBytes
        try TLSWriteCoalescer.install(on: pipeline)
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: true,
            withServerUpgrade: (upgraders: [], completionHandler: { _ in }),
            withErrorHandling: false,
            withOutboundHeaderValidation: false,
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits)
        try pipeline.addHandler(RequestEndReadAhead(),
                                position: .after(try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)))
        try pipeline.addHandler(ClientHTTPHandler(services: services, tunnel: tunnel, reverse: reverse, replay: replay))
    }

    /// Puts `replacement` at the end of the client pipeline and removes every HTTP handler,
    /// the decoder last so the bytes it holds flow into `replacement`; `handedOver` runs once
    /// they have.
    static func replaceHTTPHandlers(in context: ChannelHandlerContext, with replacement: any ChannelHandler,
                                    handedOver: @escaping () -> Void) throws {
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandler(replacement)
        if let upgrade = try? pipeline.handler(type: HTTPServerUpgradeHandler.self) {
            pipeline.removeHandler(upgrade, promise: nil)
        }
        pipeline.removeHandler(try pipeline.handler(type: HTTPServerPipelineHandler.self), promise: nil)
        pipeline.removeHandler(try pipeline.handler(type: RequestEndReadAhead.self), promise: nil)
        pipeline.removeHandler(try pipeline.handler(type: HTTPResponseEncoder.self), promise: nil)
        if let coalescer = try? pipeline.handler(type: TLSWriteCoalescer.self) {
            pipeline.removeHandler(coalescer, promise: nil)
        }
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        let channel = context.channel
        pipeline.removeHandler(context: context, promise: nil)  // this ClientHTTPHandler
        // The decoder leaves on the next loop tick, handing over the bytes it holds; an end of
        // input read before then waits, or the decoder would drop those bytes.
        let hold = InputClosedHold()
        try pipeline.addHandler(hold, position: .first)
        let decoderRemoved = channel.eventLoop.makePromise(of: Void.self)
        pipeline.removeHandler(decoder, promise: decoderRemoved)
        decoderRemoved.futureResult.assumeIsolated().whenComplete { _ in
            handedOver()
            hold.release()
            channel.read()
        }
    }
}
