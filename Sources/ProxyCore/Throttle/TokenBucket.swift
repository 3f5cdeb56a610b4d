/// How many bytes may pass now, at a steady rate with a small burst: the pacing of a throttle,
/// without a clock or I/O (the caller passes the time, in nanoseconds of any monotonic clock).
///
/// Tokens (bytes) refill continuously at `bytesPerSecond` up to `capacity`; taking more than
/// there are waits for the refill (`nanosecondsUntilAvailable`). The capacity — 50 ms of the rate,
/// at least one TCP segment — keeps bursts short, so a slow rate feels slow from its first bytes
/// and the timer that drives it fires about 20 times a second, whatever the rate.
public struct TokenBucket: Sendable, Hashable {
    public let bytesPerSecond: Int
    public let capacity: Int
    private var tokens: Double
    private var refilledAt: UInt64

    public init(bytesPerSecond: Int, now: UInt64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.capacity = max(1460, self.bytesPerSecond / 20)
        self.tokens = Double(capacity)
        self.refilledAt = now
    }

    private mutating func refill(_ now: UInt64) {
        guard now > refilledAt else { return }
        tokens = min(Double(capacity), tokens + Double(now - refilledAt) * Double(bytesPerSecond) / 1e9)
        refilledAt = now
    }

    /// Takes up to `wanted` bytes' worth; returns how many may pass now (0 when none).
    public mutating func take(upTo wanted: Int, now: UInt64) -> Int {
        refill(now)
        let granted = min(wanted, Int(tokens))
        guard granted > 0 else { return 0 }
        tokens -= Double(granted)
        return granted
    }

    /// How long until `bytes` (at most the capacity) may pass, from `now`; 0 when they may now.
    public func nanosecondsUntilAvailable(_ bytes: Int, now: UInt64) -> UInt64 {
        var copy = self
        copy.refill(now)
        let missing = Double(min(max(bytes, 1), capacity)) - copy.tokens
        guard missing > 0 else { return 0 }
        return UInt64((missing * 1e9 / Double(bytesPerSecond)).rounded(.up))
    }
}
