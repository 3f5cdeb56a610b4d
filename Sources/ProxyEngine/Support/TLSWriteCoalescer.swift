import NIOCore
import NIOSSL

/// Joins the small writes of one flush into one buffer before they reach the TLS handler, so
/// that a response head and its small body leave as one TLS record, not two.
///
/// NIOSSL seals every buffer written to it as a record of its own (`SSL_write` per write): an
/// HTTP/1 response of 1 KiB went out as a head record and a body record, three `SSL_write`s per
/// proxied request with the request's. Each record costs a seal here, an open at the peer and
/// 22 bytes on the wire. This handler holds the buffers written since the last flush while they
/// add up to at most `maxJoinedBytes` (one record's worth) and, at the flush, writes them as one;
/// a single buffer, a file region, or a buffer that would take the total past the bound goes on
/// untouched (held ones first, in order). The joined buffer is the only copy made, and only when
/// it saves a record.
///
/// Sits right after the TLS handler, before the HTTP encoder (`ClientPipelineSetup`,
/// `UpstreamHTTPHandler.installPipeline`), and leaves with the HTTP handlers. `install(on:)`
/// adds it only where there is a TLS handler.
final class TLSWriteCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// A TLS record's largest plaintext.
    static let maxJoinedBytes = 16 << 10

    private var held: [ByteBuffer] = []
    private var heldBytes = 0
    /// Completed when the held writes are: the first promise given, the others cascaded from it.
    private var heldPromise: EventLoopPromise<Void>?

    init() {
        held.reserveCapacity(4)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data),
              heldBytes + buffer.readableBytes <= Self.maxJoinedBytes else {
            release(context)
            context.write(data, promise: promise)
            return
        }
        if buffer.readableBytes > 0 || held.isEmpty {  // an empty write (a message's end) joins the held ones
            held.append(buffer)
            heldBytes += buffer.readableBytes
        }
        if let promise {
            if let heldPromise {
                heldPromise.futureResult.cascade(to: promise)
            } else {
                heldPromise = promise
            }
        }
    }

    func flush(context: ChannelHandlerContext) {
        release(context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        release(context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release(context)
    }

    /// Writes what is held, as it came when it is one buffer, joined when more.
    private func release(_ context: ChannelHandlerContext) {
        guard !held.isEmpty else { return }
        let promise = heldPromise
        heldPromise = nil
        if held.count == 1 {
            let only = held[0]
            held.removeAll(keepingCapacity: true)
            heldBytes = 0
            context.write(wrapOutboundOut(.byteBuffer(only)), promise: promise)
            return
        }
        var joined = context.channel.allocator.buffer(capacity: heldBytes)
        for var buffer in held {
            joined.writeBuffer(&buffer)
        }
        held.removeAll(keepingCapacity: true)
        heldBytes = 0
        context.write(wrapOutboundOut(.byteBuffer(joined)), promise: promise)
    }

    /// Adds a coalescer at the end of `pipeline` when the pipeline has a TLS handler.
    static func install(on pipeline: ChannelPipeline.SynchronousOperations) throws {
        guard (try? pipeline.handler(type: NIOSSLHandler.self)) != nil else { return }
        try pipeline.addHandler(TLSWriteCoalescer())
    }
}
