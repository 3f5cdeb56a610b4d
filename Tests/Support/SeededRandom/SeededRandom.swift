/// SplitMix64: a small deterministic generator for the test targets' random inputs, so a
/// failure replays exactly from its seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// `count` random bytes, eight from each number drawn (byte-wise draws are slow in debug builds).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
