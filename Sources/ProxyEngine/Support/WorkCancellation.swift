import NIOConcurrencyHelpers

/// A flag the owner of some blocking work raises when its result is no longer wanted (the
/// client went away), read by the work before each step so it stops instead of running on.
///
/// Raised on an event loop, read on pool threads: a lock, cheap next to a step's work.
final class WorkCancellation: Sendable {
    /// What work that stopped because of a cancellation fails with.
    struct Cancelled: Error, CustomStringConvertible {
        var description: String { "cancelled: the client has gone" }
    }

    private let cancelled = NIOLockedValueBox(false)

    init() {}

    func cancel() {
        cancelled.withLockedValue { $0 = true }
    }

    var isCancelled: Bool {
        cancelled.withLockedValue { $0 }
    }

    /// Throws `Cancelled` once cancelled.
    func check() throws {
        if isCancelled { throw Cancelled() }
    }
}
