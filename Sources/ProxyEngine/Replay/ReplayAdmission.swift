import NIOConcurrencyHelpers

/// Lets replays start on the event loops only while the proxy is not stopping, and lets the
/// stop wait for those setting up their in-process connection: a connection set up on an event
/// loop that shut down meanwhile would leave a promise no one can complete (a crash in debug
/// builds). Replays already running end with the loops, as client connections do.
final class ReplayAdmission: Sendable {
    private let state = NIOLockedValueBox((closed: false, starting: 0))

    /// Whether a replay may set up its connection now; `leave()` once it is set up (or failed).
    func enter() -> Bool {
        state.withLockedValue { state in
            guard !state.closed else { return false }
            state.starting += 1
            return true
        }
    }

    func leave() {
        state.withLockedValue { $0.starting -= 1 }
    }

    /// Admits no more replays, and waits (at most a second) for those setting up.
    func close() async {
        state.withLockedValue { $0.closed = true }
        for _ in 0..<1_000 where state.withLockedValue({ $0.starting }) > 0 {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
