import NIOCore
import ProxyCore

/// Paces what a connection reads to a byte rate: the throttle (`ThrottleProfile`), one handler
/// per direction, on the side the bytes come in from — the origin's connection for downloads,
/// the client's for uploads.
///
/// Why reads: pacing what comes in paces everything after it (the relay, TLS, the HTTP/2 codec,
/// the client's socket) without touching them, and back-pressure is the handler's own — while
/// more than `window` bytes wait here it passes no `read()` on, so the kernel's buffer fills and
/// TCP slows the sender. No thread, no busy loop: a `TokenBucket` says how much may pass, one
/// timer on the event loop fires when more may, and at most `window` bytes wait in memory.
///
/// An end of input waits behind the bytes read before it: on a connection that closes at its
/// end (`closesOnEndOfInput`, HTTP to an origin) the handler turns half-closure on and closes
/// once the held bytes are through, as NIO would have at once; elsewhere it passes the
/// `inputClosed` event on then. A reset drops what waits.
final class ThrottledReads: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Any

    private var bucket: TokenBucket?
    private var held = CircularBuffer<ByteBuffer>()
    private var heldBytes = 0
    private var readWanted = false
    private var inputEnded = false
    private let closesOnEndOfInput: Bool
    private var timer = DeadlineTimer()
    private var timerArmed = false
    private weak var context: ChannelHandlerContext?

    init(bytesPerSecond: Int?, closesOnEndOfInput: Bool, now: NIODeadline) {
        self.bucket = bytesPerSecond.map { TokenBucket(bytesPerSecond: $0, now: now.uptimeNanoseconds) }
        self.closesOnEndOfInput = closesOnEndOfInput
    }

    /// Bytes that may wait here before reads stop: a little over two bursts of the bucket.
    private var window: Int { max(64 << 10, 2 * (bucket?.capacity ?? 0)) }

    /// Puts a pacer first in `channel`'s pipeline, or re-rates the one there (nil: no limit).
    /// Call on the channel's event loop.
    static func pace(_ channel: any Channel, bytesPerSecond: Int?, closesOnEndOfInput: Bool) {
        let pipeline = channel.pipeline.syncOperations
        if let existing = try? pipeline.handler(type: ThrottledReads.self) {
            existing.setRate(bytesPerSecond)
            return
        }
        guard bytesPerSecond != nil else { return }
        if closesOnEndOfInput {
            // The end of input must wait for the held bytes: NIO would close at once without this.
            _ = try? channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
        }
        // One small read at a time: what one read may bring beyond the window stays small.
        _ = try? channel.syncOptions?.setOption(.maxMessagesPerRead, value: 1)
        _ = try? channel.syncOptions?.setOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 16 << 10))
        try? pipeline.addHandler(ThrottledReads(bytesPerSecond: bytesPerSecond, closesOnEndOfInput: closesOnEndOfInput,
                                                now: channel.eventLoop.now), position: .first)
    }

    /// Changes the pace. What waits is let through on the next loop turn, never from inside the
    /// call: it comes from an exchange being set up, which bytes delivered at once would re-enter.
    func setRate(_ bytesPerSecond: Int?) {
        guard bytesPerSecond != bucket?.bytesPerSecond else { return }
        let now = context?.eventLoop.now ?? .now()
        bucket = bytesPerSecond.map { TokenBucket(bytesPerSecond: $0, now: now.uptimeNanoseconds) }
        guard let context, !held.isEmpty else { return }
        timerArmed = true
        timer.schedule(at: context.eventLoop.now, on: context.eventLoop) {
            self.timerArmed = false
            if let context = self.context { self.drain(context) }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard bucket != nil || !held.isEmpty else {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        heldBytes += buffer.readableBytes
        // A read's buffer may be much larger than what it holds: keep only the bytes, or every
        // waiting connection would keep whole receive buffers alive.
        if buffer.capacity > 2 * buffer.readableBytes + 4096 {
            var copy = context.channel.allocator.buffer(capacity: buffer.readableBytes)
            copy.writeBuffer(&buffer)
            buffer = copy
        }
        held.append(buffer)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if bucket == nil && held.isEmpty {
            context.fireChannelReadComplete()
        } else {
            drain(context)  // passes on its own read-complete for what it lets through
        }
    }

    func read(context: ChannelHandlerContext) {
        if heldBytes >= window {
            readWanted = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, !held.isEmpty {
            inputEnded = true
            return
        }
        if case ChannelEvent.inputClosed = event, closesOnEndOfInput {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        held.removeAll()
        heldBytes = 0
        context.fireChannelInactive()
    }

    /// Lets through what the bucket allows now, then waits for the next bytes' turn.
    private func drain(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now.uptimeNanoseconds
        var passed = false
        while !held.isEmpty {
            var first = held.removeFirst()
            var granted = first.readableBytes
            if var paced = bucket {
                granted = paced.take(upTo: granted, now: now)
                bucket = paced
            }
            guard granted > 0 else {
                held.prepend(first)
                break
            }
            let slice = first.readSlice(length: granted)!
            if first.readableBytes > 0 { held.prepend(first) }
            heldBytes -= granted
            passed = true
            context.fireChannelRead(wrapInboundOut(slice))
        }
        if passed { context.fireChannelReadComplete() }
        if held.isEmpty, inputEnded {
            inputEnded = false
            if closesOnEndOfInput {
                context.close(promise: nil)
            } else {
                context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            }
            return
        }
        if let first = held.first, let bucket, !timerArmed {
            timerArmed = true
            let wait = bucket.nanosecondsUntilAvailable(first.readableBytes, now: now)
            timer.schedule(at: context.eventLoop.now + .nanoseconds(Int64(max(wait, 1_000_000))), on: context.eventLoop) {
                self.timerArmed = false
                if let context = self.context { self.drain(context) }
            }
        }
        if readWanted, heldBytes < window {
            readWanted = false
            context.read()
        }
    }
}
