import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Log lines for refused clients (wrong credentials, an address outside `--allow-clients`, a
/// guarded client asking for this machine's own services), rate-limited: a client retrying in
/// a loop, or a scan of the LAN, must not flood the log.
///
/// At most `burst` lines per `window`; the lines held back are counted and said in the next
/// line that is written.
final class RefusalLog: Sendable {
    private struct State {
        var windowStart = NIODeadline.uptimeNanoseconds(0)
        var written = 0
        var suppressed = 0
    }

    private let logger: Logger
    private let burst: Int
    private let window: TimeAmount
    private let state = NIOLockedValueBox(State())

    init(logger: Logger, burst: Int = 10, window: TimeAmount = .seconds(60)) {
        self.logger = logger
        self.burst = burst
        self.window = window
    }

    /// Logs `line` unless the window's lines are spent; returns whether it was written.
    @discardableResult
    func note(_ line: String, now: NIODeadline = .now()) -> Bool {
        let held: Int? = state.withLockedValue { state in
            if now - state.windowStart >= window {
                state.windowStart = now
                state.written = 0
            }
            guard state.written < burst else {
                state.suppressed += 1
                return nil
            }
            state.written += 1
            defer { state.suppressed = 0 }
            return state.suppressed
        }
        guard let held else { return false }
        logger.warning("\(held > 0 ? "\(line) (and \(held) refusals before it not logged)" : line)")
        return true
    }
}
