import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM without blocking a thread, so `run` can shut down in order.
enum SignalWaiter {
    static func waitForTermination() async -> Int32 {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "proxyapp.signals")
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let resumed = ResumeOnce(continuation)
            for number in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { resumed.resume(number) }
                source.resume()
                resumed.keep(source)
            }
        }
    }

    /// Resumes the continuation for the first signal only and keeps the sources alive.
    private final class ResumeOnce: @unchecked Sendable {
        private var continuation: CheckedContinuation<Int32, Never>?
        private var sources: [any DispatchSourceSignal] = []
        private let lock = NSLock()

        init(_ continuation: CheckedContinuation<Int32, Never>) {
            self.continuation = continuation
        }

        func keep(_ source: any DispatchSourceSignal) {
            lock.withLock { sources.append(source) }
        }

        func resume(_ number: Int32) {
            let continuation = lock.withLock { () -> CheckedContinuation<Int32, Never>? in
                defer { self.continuation = nil }
                return self.continuation
            }
            continuation?.resume(returning: number)
        }
    }
}
