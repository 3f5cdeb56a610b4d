/// Response times in a fixed set of buckets, so recording one costs an index computation and an
/// increment, never an allocation, however long the run.
///
/// Buckets keep 8 significant bits of a value in nanoseconds (log-linear, like HdrHistogram):
/// values below 256 ns are exact, larger ones land in a bucket at most 1/128 (0.8 %) wide.
/// Values from 2^40 ns (about 18 minutes) up share the last bucket.
struct LatencyHistogram: Sendable, Equatable {
    private static let exactLimit: UInt64 = 256
    private static let subBuckets = 128
    private static let largestValue: UInt64 = (1 << 40) - 1
    static let bucketCount = index(of: largestValue) + 1

    private var counts = [Int](repeating: 0, count: bucketCount)
    private(set) var count = 0
    private(set) var maximum: UInt64 = 0

    mutating func record(nanoseconds: UInt64) {
        counts[Self.index(of: nanoseconds)] &+= 1
        count &+= 1
        if nanoseconds > maximum { maximum = nanoseconds }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for bucket in 0..<Self.bucketCount { counts[bucket] += other.counts[bucket] }
        count += other.count
        maximum = max(maximum, other.maximum)
    }

    /// The value at `fraction` (0.5 = median) of the recorded ones, as the middle of its bucket
    /// (the exact maximum for 1.0); nil when nothing was recorded.
    func value(atFraction fraction: Double) -> UInt64? {
        guard count > 0 else { return nil }
        if fraction >= 1 { return maximum }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for bucket in 0..<Self.bucketCount {
            seen += counts[bucket]
            if seen >= rank { return min(Self.middle(of: bucket), maximum) }
        }
        return maximum
    }

    static func index(of nanoseconds: UInt64) -> Int {
        let value = min(nanoseconds, largestValue)
        guard value >= exactLimit else { return Int(value) }
        let shift = (UInt64.bitWidth - value.leadingZeroBitCount) - 8
        let mantissa = Int(value >> UInt64(shift))  // 128...255
        return Int(exactLimit) + (shift - 1) * subBuckets + (mantissa - subBuckets)
    }

    /// The smallest value that lands in `bucket` and the width of the bucket.
    static func range(of bucket: Int) -> (lowest: UInt64, width: UInt64) {
        guard bucket >= Int(exactLimit) else { return (UInt64(bucket), 1) }
        let offset = bucket - Int(exactLimit)
        let shift = offset / subBuckets + 1
        let mantissa = UInt64(offset % subBuckets + subBuckets)
        return (mantissa << UInt64(shift), 1 << UInt64(shift))
    }

    private static func middle(of bucket: Int) -> UInt64 {
        let (lowest, width) = range(of: bucket)
        return lowest + (width - 1) / 2
    }
}
