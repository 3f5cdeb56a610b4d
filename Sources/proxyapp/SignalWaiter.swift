import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// SIGINT and SIGTERM for `proxyapp run`: the first one asks for an orderly stop (`wait()`
/// returns it); any signal once stopping has begun (`stopping()`, or a second signal) ends the
/// process at once, so a user is never stuck with a proxy that does not go away.
///
/// The signals are ignored as process actions and read through dispatch sources, so nothing
/// runs in a signal handler; `exit` runs the `atexit` handlers (the TUI's terminal restore).
final class SignalWaiter: Sendable {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
        var stopping = false
    }

    /// Keeps a dispatch source alive; it is only ever resumed, from `install`.
    private struct Source: @unchecked Sendable {
        let source: any DispatchSourceSignal
    }

    private let state = NIOLockedValueBox(State())
    private let sources = NIOLockedValueBox<[Source]>([])
    private let queue = DispatchQueue(label: "proxyapp.signals")

    /// Takes SIGINT and SIGTERM over from their default action, from now on.
    static func install() -> SignalWaiter {
        let waiter = SignalWaiter()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: waiter.queue)
            source.setEventHandler { waiter.received(number) }
            source.resume()
            waiter.sources.withLockedValue { $0.append(Source(source: source)) }
        }
        return waiter
    }

    /// The first signal (at once if it came already).
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let number = state.withLockedValue { state -> Int32? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let number { continuation.resume(returning: number) }
        }
    }

    /// The proxy is stopping: a signal from now on exits at once.
    func stopping() {
        state.withLockedValue { $0.stopping = true }
    }

    private func received(_ number: Int32) {
        enum Action { case resume(CheckedContinuation<Int32, Never>?), exitNow }
        let action = state.withLockedValue { state -> Action in
            if state.stopping || state.received != nil { return .exitNow }
            state.received = number
            defer { state.waiter = nil }
            return .resume(state.waiter)
        }
        switch action {
        case .resume(let waiter):
            waiter?.resume(returning: number)
        case .exitNow:
            Console.write("\n\(Self.name(number)) again: exiting without waiting for the shutdown to finish\n")
            exit(128 + number)
        }
    }

    static func name(_ number: Int32) -> String {
        number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)"
    }
}
