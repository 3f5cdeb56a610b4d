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

    /// The stored bytes: most bodies are one buffer (no array to allocate per flow).
    private enum Storage: Sendable {
        case none
        case one(Data)
        case blocks([Data])
    }

    private var storage: Storage
    /// How many bytes the stored prefix holds.
    public private(set) var storedCount: Int
    /// How many body bytes crossed the proxy in total.
    public var size: Int64
    /// True when the stored bytes are fewer than `size` (capture cap, or dropped under load).
    public var truncated: Bool

    public init(bytes: Data = Data(), size: Int64 = 0, truncated: Bool = false) {
        storage = bytes.isEmpty ? .none : .one(bytes)
        storedCount = bytes.count
        self.size = size
        self.truncated = truncated
    }

    /// The stored prefix in the blocks it was captured in; none empty.
    public var parts: [Data] {
        switch storage {
        case .none: return []
        case .one(let data): return [data]
        case .blocks(let blocks): return blocks
        }
    }

    /// The stored prefix of the body as one buffer (a copy when it was captured in blocks).
    public var bytes: Data {
        get {
            switch storage {
            case .none: return Data()
            case .one(let data): return data
            case .blocks(let blocks):
                var joined = Data(capacity: storedCount)
                for block in blocks { joined.append(block) }
                return joined
            }
        }
        set {
            storage = newValue.isEmpty ? .none : .one(newValue)
            storedCount = newValue.count
        }
    }

    /// Appends `bytes` to the stored prefix, filling the last block up to `blockSize` first.
    /// `expected` sizes a new block when the body's length is known (Content-Length).
    public mutating func append(_ bytes: UnsafeRawBufferPointer, expected: Int? = nil) {
        guard !bytes.isEmpty else { return }
        // Taken out of `storage` while it changes, so the buffers stay uniquely referenced
        // (appended in place, not copied). Most bodies fit one block: no array for them.
        switch storage {
        case .none where bytes.count <= Self.blockSize:
            var block = Data(capacity: min(max(expected ?? 0, bytes.count), Self.blockSize))
            block.append(contentsOf: bytes)
            storage = .one(block)
            storedCount = bytes.count
            return
        case .one(var data) where data.count + bytes.count <= Self.blockSize:
            storage = .none
            data.append(contentsOf: bytes)
            storage = .one(data)
            storedCount += bytes.count
            return
        default:
            break
        }
        var blocks: [Data]
        switch storage {
        case .none: blocks = []
        case .one(let data): blocks = [data]
        case .blocks(let all): blocks = all
        }
        storage = .none
        var rest = bytes
        while !rest.isEmpty {
            if let last = blocks.indices.last, blocks[last].count < Self.blockSize {
                let taken = min(rest.count, Self.blockSize - blocks[last].count)
                blocks[last].append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
                storedCount += taken
                continue
            }
            let remaining = expected.map { max($0 - storedCount, rest.count) } ?? rest.count
            var block = Data(capacity: min(remaining, Self.blockSize))
            let taken = min(rest.count, Self.blockSize)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            blocks.append(block)
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
            storedCount += taken
        }
        storage = blocks.count == 1 ? .one(blocks[0]) : .blocks(blocks)
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
