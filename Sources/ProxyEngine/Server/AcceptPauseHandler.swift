#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore

/// On the listening channel: when accepting fails for want of descriptors or memory (EMFILE,
/// ENFILE, ENOBUFS, ENOMEM), stops watching the listening socket for `pause`, then tries again.
/// New connections wait in the kernel's listen backlog meanwhile instead of the event loop
/// spinning on failed `accept` calls (it did: 192,000 in 4 s at 56 % of a core).
///
/// Why not NIO's `AcceptBackoffHandler` (2.101; `ServerBootstrap.bind(host:port:)` does not
/// install it, only the async `bind` does): it delays the next `read`, but when the first accept
/// of a wake-up fails NIO's read is still pending (`readPending` is cleared only by a successful
/// accept), so the socket stays registered with epoll and wakes the loop again at once.
/// Measured under `prlimit --nofile=128` with 200 connections held, over 3 s: 58,615 failing
/// `accept4` calls with it (as without it), 12 with this handler. Turning `autoRead` off
/// unregisters the socket; turning it back on registers it and retries.
///
/// Logs once when accepting pauses and once when it works again, never per attempt.
final class AcceptPauseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let pause: TimeAmount
    private let logger: Logger
    private var resume: Scheduled<Void>?
    /// True from the first failure until a connection is accepted again.
    private var starved = false

    init(pause: TimeAmount = .milliseconds(250), logger: Logger) {
        self.pause = pause
        self.logger = logger
    }

    /// Whether `error` means "no room for another connection now" rather than a broken socket.
    static func isResourceShortage(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if starved {
            starved = false
            logger.notice("accepting connections again")
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard Self.isResourceShortage(error) else {
            context.fireErrorCaught(error)
            return
        }
        if !starved {
            starved = true
            logger.warning("cannot accept connections: \(Self.describe(error)); new connections wait until descriptors free up",
                           metadata: ["open-file-limit": "\(DescriptorLimit.soft)"])
        }
        guard resume == nil, let options = context.channel.syncOptions else { return }
        try? options.setOption(.autoRead, value: false)
        resume = context.eventLoop.assumeIsolated().scheduleTask(in: pause) {
            self.resume = nil
            try? options.setOption(.autoRead, value: true)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guard let resume else { return }
        resume.cancel()
        self.resume = nil
        try? context.channel.syncOptions?.setOption(.autoRead, value: true)  // never leave the listener paused
    }

    func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }

    private static func describe(_ error: any Error) -> String {
        SystemErrorText.describe(error)
    }
}
