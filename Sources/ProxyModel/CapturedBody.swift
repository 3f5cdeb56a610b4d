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
///
/// A body that reaches one block can be spooled (`startSpooling(_:)`): each full block then goes
/// to a `BodySpool` as soon as it fills, so memory holds at most one block of it.
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
    /// Where full blocks go once the body is spooled; nil while it is all in memory.
    public private(set) var spool: (any BodySpool)?
    /// Bytes of the stored prefix handed to `spool` (the rest are in memory).
    private var spooledCount = 0
    /// Set when the spool refused a block: nothing more is stored.
    private var spoolRefused = false

    public init(bytes: Data = Data(), size: Int64 = 0, truncated: Bool = false) {
        storage = bytes.isEmpty ? .none : .one(bytes)
        storedCount = bytes.count
        self.size = size
        self.truncated = truncated
    }

    /// Stored bytes held in memory: `storedCount` less what went to the spool. Queues bound
    /// their memory by it.
    public var heldCount: Int { storedCount - spooledCount }

    /// The stored prefix in the blocks it was captured in; none empty. A spooled body's first
    /// part is what its spool wrote (read back, waiting for its writes).
    public var parts: [Data] {
        if let spool {
            let written = spool.contents()
            return (written.isEmpty ? [] : [written]) + memoryParts
        }
        return memoryParts
    }

    private var memoryParts: [Data] {
        switch storage {
        case .none: return []
        case .one(let data): return [data]
        case .blocks(let blocks): return blocks
        }
    }

    /// The first `count` stored bytes, read from the spool only as far as needed.
    public func prefix(_ count: Int) -> Data {
        var result = spool.map { $0.contents(upTo: count) } ?? Data()
        for part in memoryParts where result.count < count {
            result.append(part.prefix(count - result.count))
        }
        return result
    }

    /// The stored prefix of the body as one buffer (a copy when it was captured in blocks; read
    /// back from the spool when spooled). Setting it ends any spooling.
    public var bytes: Data {
        get {
            if spool != nil {
                var joined = Data(capacity: storedCount)
                for part in parts { joined.append(part) }
                return joined
            }
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
            spool = nil
            spooledCount = 0
            spoolRefused = false
        }
    }

    /// From now on, full blocks go to `spool` as they fill; those already full go now.
    public mutating func startSpooling(_ spool: any BodySpool) {
        guard self.spool == nil else { return }
        self.spool = spool
        spillFullBlocks()
    }

    /// Hands the blocks still in memory to the spool and tells it the body is complete.
    public mutating func finishSpooling() {
        guard let spool else { return }
        spillFullBlocks(all: true)
        spool.finish()
    }

    /// Hands full blocks (all blocks when `all`) to the spool, in order. A refusal drops the
    /// refused blocks and everything after them.
    private mutating func spillFullBlocks(all: Bool = false) {
        guard let spool, !spoolRefused else { return }
        var blocks = memoryParts
        guard !blocks.isEmpty else { return }
        storage = .none
        var kept = 0
        while kept < blocks.count, all || blocks[kept].count >= Self.blockSize {
            let block = blocks[kept]
            guard spool.append(block) else {
                refuseSpooling(dropping: blocks[kept...].reduce(0) { $0 + $1.count })
                return
            }
            spooledCount += block.count
            kept += 1
        }
        blocks.removeFirst(kept)
        storage = blocks.isEmpty ? .none : blocks.count == 1 ? .one(blocks[0]) : .blocks(blocks)
    }

    private mutating func refuseSpooling(dropping count: Int) {
        spoolRefused = true
        storage = .none
        storedCount -= count
        truncated = true
    }

    /// Appends `bytes` to the stored prefix, filling the last block up to `blockSize` first.
    /// `expected` sizes a new block when the body's length is known (Content-Length).
    public mutating func append(_ bytes: UnsafeRawBufferPointer, expected: Int? = nil) {
        guard !spoolRefused else {
            truncated = true
            return
        }
        appendInMemory(bytes, expected: expected)
        if spool != nil { spillFullBlocks() }
    }

    /// Appends `data` without copying it when the body is spooled: the spool takes it as it is
    /// (after any partial block still in memory, so the order holds). Meant for bytes that share
    /// a receive buffer, so a download's bytes are copied once, by the spool's write, instead of
    /// first into a block on the event loop. A body not spooled copies `data` as `append(_:)` does.
    public mutating func append(shared data: Data) {
        guard let spool, !spoolRefused else {
            data.withUnsafeBytes { append($0) }
            return
        }
        spillFullBlocks(all: true)
        guard !spoolRefused else {
            truncated = true
            return
        }
        storedCount += data.count
        guard spool.append(data) else {
            refuseSpooling(dropping: data.count)
            return
        }
        spooledCount += data.count
    }

    private mutating func appendInMemory(_ bytes: UnsafeRawBufferPointer, expected: Int?) {
        guard !bytes.isEmpty else { return }
        // Taken out of `storage` while it changes, so the buffers stay uniquely referenced
        // (appended in place, not copied). Most bodies fit one block: no array for them.
        switch storage {
        case .none where bytes.count <= Self.blockSize:
            let remaining = expected.map { $0 - storedCount } ?? 0
            var block = Data(capacity: min(max(remaining, bytes.count), Self.blockSize))
            block.append(contentsOf: bytes)
            storage = .one(block)
            storedCount += bytes.count  // 0 before, unless earlier blocks went to a spool
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
