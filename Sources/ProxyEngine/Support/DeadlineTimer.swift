import NIOCore

/// A one-shot timer on an event loop that its owner re-arms, for timeouts checked against a
/// "last activity" timestamp.
///
/// NIO's `IdleStateHandler` wraps every write in a promise to learn when it completed; across
/// both sides of an exchange that was a measurable share of a request's cost. Here a handler
/// notes activity as a plain timestamp and a check runs once per timeout period.
///
/// The scheduled closure may capture its owner strongly (no `[weak self]`: weak references put
/// an object on the slow reference-counting path); the owner must `cancel()` when it leaves the
/// pipeline, which also releases the closure.
struct DeadlineTimer {
    private var scheduled: Scheduled<Void>?

    /// Runs `body` on `loop` at `deadline`, replacing any earlier schedule.
    mutating func schedule(at deadline: NIODeadline, on loop: any EventLoop, _ body: @escaping () -> Void) {
        scheduled?.cancel()
        scheduled = loop.assumeIsolated().scheduleTask(deadline: deadline, body)
    }

    mutating func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }
}
