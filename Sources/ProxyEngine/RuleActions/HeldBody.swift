import NIOCore

/// A message body held back while it arrives, so a rewrite rule can edit it whole, up to a
/// limit: past it the parts are handed back to be sent on unchanged.
struct HeldBody {
    private(set) var parts: [ByteBuffer] = []
    private(set) var size = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Keeps `buffer`; false when the body grew past the limit (`buffer` is kept all the same,
    /// and the holder should give up).
    mutating func append(_ buffer: ByteBuffer) -> Bool {
        parts.append(buffer)
        size += buffer.readableBytes
        return size <= limit
    }

    /// The first `count` bytes (a capture of the held body without copying all of it).
    func prefix(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(count, size))
        for part in parts where bytes.count < count {
            part.withUnsafeReadableBytes { bytes.append(contentsOf: $0.prefix(count - bytes.count)) }
        }
        return bytes
    }

    /// The parts as one contiguous byte array.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for part in parts {
            part.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        }
        return bytes
    }
}
