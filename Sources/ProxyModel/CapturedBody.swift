import Foundation

/// A message body as stored: the first bytes up to the capture cap, the full size that crossed
/// the proxy, and whether bytes were left out.
///
/// Bodies are captured raw (still content-encoded, as sent) so exports can reproduce the exchange
/// exactly; decoding belongs to the codec layer.
///
/// A live capture appends the body in blocks of at most `blockSize` bytes (`append(_:)`) instead
/// of one buffer as large as the body: a 10 MiB download then never asks for a 10 MiB buffer on
/// the event loop (above glibc's mmap threshold every such buffer was a fresh mapping, and
/// faulting its pages in cost more than the copy), and the capture writer writes the blocks one
/// after another. `bytes` joins them for readers that want one buffer.
public struct CapturedBody: Sendable, Hashable {
    /// The largest block a live capture appends into.
    public static let blockSize = 256 << 10

    /// The stored prefix in the blocks it was captured in; none empty.
    public private(set) var parts: [Data]
    /// How many bytes `parts` hold together.
    public private(set) var storedCount: Int
    /// How many body bytes crossed the proxy in total.
    public var size: Int64
    /// True when the stored bytes are fewer than `size` (capture cap, or dropped under load).
    public var truncated: Bool

    public init(bytes: Data = Data(), size: Int64 = 0, truncated: Bool = false) {
        parts = bytes.isEmpty ? [] : [bytes]
        storedCount = bytes.count
        self.size = size
        self.truncated = truncated
    }

    /// The stored prefix of the body as one buffer (a copy when it was captured in blocks).
    public var bytes: Data {
        get {
            switch parts.count {
            case 0: return Data()
            case 1: return parts[0]
            default:
                var joined = Data(capacity: storedCount)
                for part in parts { joined.append(part) }
                return joined
            }
        }
        set {
            parts = newValue.isEmpty ? [] : [newValue]
            storedCount = newValue.count
        }
    }

    /// Appends `bytes` to the stored prefix, filling the last block up to `blockSize` first.
    /// `expected` sizes a new block when the remaining length is known (Content-Length).
    public mutating func append(_ bytes: UnsafeRawBufferPointer, expected: Int? = nil) {
        var rest = bytes
        while !rest.isEmpty {
            if let last = parts.indices.last, parts[last].count < Self.blockSize {
                let taken = min(rest.count, Self.blockSize - parts[last].count)
                parts[last].append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
                storedCount += taken
                continue
            }
            let remaining = expected.map { max($0 - storedCount, rest.count) } ?? rest.count
            var block = Data(capacity: min(max(remaining, rest.count), Self.blockSize))
            let taken = min(rest.count, Self.blockSize)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            parts.append(block)
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
            storedCount += taken
        }
    }

    public static func == (lhs: CapturedBody, rhs: CapturedBody) -> Bool {
        lhs.size == rhs.size && lhs.truncated == rhs.truncated && lhs.storedCount == rhs.storedCount
            && lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
        hasher.combine(size)
        hasher.combine(truncated)
    }

    public static let empty = CapturedBody()
}
