import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The proxy's threads for blocking work (map-local reads, large body rewrites): a
/// `NIOThreadPool` whose shutdown never waits for the work still running on it.
///
/// `NIOThreadPool.shutdownGracefully` lets running work finish, and its futures then complete
/// on their event loops: a rewrite that runs for a minute held the proxy's exit that long, and
/// its late completion hit an event loop that had shut down meanwhile ("Cannot schedule tasks
/// on an EventLoop that has already shut down"). Here every piece of work is registered until
/// its promise is completed, by whoever takes it out of the register: the work when it ends,
/// or `shutdown()`, which fails all of them at once (while the event loops still run) and
/// leaves running work to end unheard.
public final class BlockingPool: BlockingWork, Sendable {
    /// What work fails with once the pool is shut down.
    public struct ShutDown: Error, CustomStringConvertible {
        public var description: String { "the proxy is shutting down" }
    }

    private struct Register {
        var open = true
        var nextID = 0
        var failures: [Int: @Sendable (any Error) -> Void] = [:]
    }

    private let threads: NIOThreadPool
    private let register = NIOLockedValueBox(Register())

    public init(numberOfThreads: Int) {
        threads = NIOThreadPool(numberOfThreads: numberOfThreads)
        threads.start()
    }

    deinit {
        shutdown()
    }

    func run<T: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        let promise = eventLoop.makePromise(of: T.self)
        let id = register.withLockedValue { register -> Int? in
            guard register.open else { return nil }
            register.nextID += 1
            register.failures[register.nextID] = { promise.fail($0) }
            return register.nextID
        }
        guard let id else {
            promise.fail(ShutDown())
            return promise.futureResult
        }
        threads.submit { state in
            guard state == .active else {
                if self.take(id) { promise.fail(ShutDown()) }
                return
            }
            let result = Result { try work() }
            if self.take(id) { promise.completeWith(result) }
        }
        return promise.futureResult
    }

    /// Fails all work not yet finished with `ShutDown` and refuses new work; stops the threads
    /// as their current work returns, without waiting for it. Call it before the event loops
    /// shut down.
    public func shutdown() {
        let failures = register.withLockedValue { register -> [@Sendable (any Error) -> Void] in
            register.open = false
            defer { register.failures = [:] }
            return Array(register.failures.values)
        }
        for fail in failures { fail(ShutDown()) }
        threads.shutdownGracefully { _ in }
    }

    /// Takes `id` out of the register; true when the caller now owns its promise.
    private func take(_ id: Int) -> Bool {
        register.withLockedValue { $0.failures.removeValue(forKey: id) != nil }
    }
}
