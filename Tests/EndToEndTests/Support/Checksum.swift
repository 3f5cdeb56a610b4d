import Foundation
import NIOCore

/// FNV-1a (64-bit) over a byte stream, fed incrementally.
///
/// The package has no cryptographic hash available to tests; this is enough to tell whether a
/// multi-megabyte body arrived intact at the origin, where the body is never kept whole.
struct Checksum: Sendable, Equatable {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        value = hash
    }

    mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { update($0) }
    }

    mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Sixteen lowercase hex digits.
    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The checksum of bytes `offset..<offset+count` of `PatternBytes`.
    static func ofPattern(offset: Int = 0, count: Int) -> Checksum {
        var checksum = Checksum()
        PatternBytes.forEachSlice(offset: offset, count: count) { checksum.update($0) }
        return checksum
    }
}
