import NIOCore
import NIOPosix

/// Runs work that may block or take long (a map-local file read, a large or regex body rewrite)
/// away from the event loops, completing on the given loop.
///
/// The proxy uses its `NIOThreadPool`; transcript tests run the work inline on their embedded
/// loop, which must not be completed from another thread.
protocol BlockingWork: Sendable {
    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T>
}

extension NIOThreadPool: BlockingWork {
    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        runIfActive(eventLoop: eventLoop, work)
    }
}
