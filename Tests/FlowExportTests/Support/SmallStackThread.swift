import Foundation

/// Runs work on a thread with a small stack (512 KiB, like a worker thread's), so a test of
/// deeply nested input fails by crashing when some code recurses once per nesting level.
enum SmallStackThread {
    static func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) -> Result {
        let box = ResultBox<Result>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.value = work()
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        return box.value!
    }

    /// Written by the thread before it signals, read after the wait.
    private final class ResultBox<Value>: @unchecked Sendable {
        var value: Value?
    }
}
