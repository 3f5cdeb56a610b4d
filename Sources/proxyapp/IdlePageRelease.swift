import Dispatch
import NIOConcurrencyHelpers

/// When `proxyapp run` gives back the code pages it is not using (`ReadOnlyFilePages`): two
/// seconds after start (what starting touched, and the first lazy set-ups), and once the
/// capture has been idle for `delay` more after the writer's idle trim (so 11 s after the last
/// flow was written, by default).
///
/// Not at the idle trim itself (a second after the last write): a release makes the next
/// request fault its code back in (1–3 ms), which a person clicking through a site a second
/// apart should not pay; after ten seconds of silence nobody notices. A release is always
/// safe, only its cost varies: a long download that writes no flow for a while may see one.
final class IdlePageRelease: Sendable {
    private struct State {
        /// Bumped by every idle report and by `stop`: a scheduled release runs only if it is
        /// still the latest.
        var generation = 0
        var activity: (@Sendable () -> Int)?
    }

    private let state = NIOLockedValueBox(State())
    private let delay: DispatchTimeInterval
    private let startDelay: DispatchTimeInterval
    private let queue = DispatchQueue(label: "proxyapp.page-release", qos: .utility)
    private let releasePages: @Sendable () -> Void

    /// - Parameters:
    ///   - delay: how long after the idle report the release waits for more activity.
    ///   - startDelay: how long after `start` the first release runs.
    ///   - releasePages: the release itself (`ReadOnlyFilePages.release()`; tests count calls).
    init(delay: DispatchTimeInterval = .seconds(10), startDelay: DispatchTimeInterval = .seconds(2),
         releasePages: @escaping @Sendable () -> Void = { ReadOnlyFilePages.release() }) {
        self.delay = delay
        self.startDelay = startDelay
        self.releasePages = releasePages
    }

    /// Releases the pages start-up touched (after `startDelay`, off the caller's thread) and
    /// from now on releases after idle spells; `activity` counts what the capture has done
    /// (flows written or dropped): a release is skipped when it changed during the delay.
    func start(activity: @escaping @Sendable () -> Int) {
        state.withLockedValue { $0.activity = activity }
        queue.asyncAfter(deadline: .now() + startDelay) { [state, releasePages] in
            if state.withLockedValue({ $0.activity != nil }) { releasePages() }  // not stopped meanwhile
        }
    }

    /// No release after this one (the proxy is stopping).
    func stop() {
        state.withLockedValue {
            $0.activity = nil
            $0.generation += 1
        }
    }

    /// The capture writer's idle report: schedules a release after `delay`, unless more
    /// activity or another report comes first.
    func captureWentIdle() {
        let scheduled: (generation: Int, activity: Int)? = state.withLockedValue { state in
            guard let activity = state.activity else { return nil }
            state.generation += 1
            return (state.generation, activity())
        }
        guard let scheduled else { return }
        queue.asyncAfter(deadline: .now() + delay) { [state, releasePages] in
            let due = state.withLockedValue { state in
                state.generation == scheduled.generation && state.activity?() == scheduled.activity
            }
            if due { releasePages() }
        }
    }
}
