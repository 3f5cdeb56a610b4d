import CaptureStore
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ProxyEngine

/// Stops what `run` started, in the one order that records every flow and never waits on
/// work that may not end (a stuck DNS lookup, a long rewrite, a download, a TLS peer that
/// never answers close_notify), so SIGTERM ends the proxy within about two seconds:
///
/// 1. the listener closes (no new clients);
/// 2. the resolver and the blocking pool answer everything still waiting on them ("shutting
///    down") while the event loops still run, and abandon calls still running on their threads;
/// 3. the event loops close every connection, each exchange recording its flow; this is given
///    `eventLoopDeadline`, then the process goes on without them;
/// 4. pins are saved and the capture writer commits its last batch and folds the write-ahead
///    log into the database (`wal_checkpoint(TRUNCATE)`).
///
/// Step 2 comes before 3 because a thread-pool answer delivered to an event loop that has
/// shut down is lost (NIO prints "Cannot schedule tasks on an EventLoop that has already shut
/// down").
struct ProxyShutdown {
    let server: ProxyServer
    let resolver: SystemHostResolver
    let blockingPool: BlockingPool
    let group: MultiThreadedEventLoopGroup
    let writer: CaptureWriter
    /// Saves what must outlive the process besides flows (auto-pins).
    let saveState: () -> Void

    /// How long the event loops get to close their connections.
    static let eventLoopDeadline: DispatchTimeInterval = .milliseconds(1_000)

    func run() async {
        try? await server.stop()
        resolver.shutdown()
        blockingPool.shutdown()
        if !(await Self.shutDown(group, within: Self.eventLoopDeadline)) {
            Console.write("(connections still closing after 1 s: not waiting for them)\n")
        }
        saveState()
        writer.close()
    }

    /// Shuts `group` down; true when it finished within `deadline`, false when it was left
    /// closing in the background.
    static func shutDown(_ group: MultiThreadedEventLoopGroup, within deadline: DispatchTimeInterval) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let pending = NIOLockedValueBox<CheckedContinuation<Bool, Never>?>(continuation)
            let finish: @Sendable (Bool) -> Void = { finished in
                let waiting = pending.withLockedValue { waiting in
                    defer { waiting = nil }
                    return waiting
                }
                waiting?.resume(returning: finished)
            }
            group.shutdownGracefully(queue: .global()) { _ in finish(true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { finish(false) }
        }
    }
}
