import NIOCore

/// Runs work that may block or take long (a map-local file read, a large or regex body rewrite)
/// away from the event loops, completing on the given loop.
///
/// The proxy uses a `BlockingPool`; transcript tests run the work inline on their embedded
/// loop, which must not be completed from another thread.
protocol BlockingWork: Sendable {
    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T>
}

extension BlockingWork {
    /// Runs `work` unless `cancellation` was cancelled before it got a thread: work queued for
    /// a client that has gone fails with `WorkCancellation.Cancelled` instead of running.
    func run<T: Sendable>(on eventLoop: any EventLoop, unless cancellation: WorkCancellation,
                          _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        run(on: eventLoop) {
            try cancellation.check()
            return try work()
        }
    }
}
