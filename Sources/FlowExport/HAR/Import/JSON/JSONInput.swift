import Foundation

/// The tokenizer's window on its input: a 64 KiB buffer refilled from a `HARByteSource`, and the
/// line and column of the next byte for error messages.
///
/// Only the bytes not yet consumed are kept; a refill moves them to the front. Lines are counted
/// where the tokenizer skips whitespace, the only place a raw newline may appear in JSON.
final class JSONInput {
    static let capacity = 64 * 1024

    private let source: any HARByteSource
    private let storage: UnsafeMutablePointer<UInt8>
    /// The next byte to consume.
    private(set) var position = 0
    /// One past the last byte read into the buffer.
    private(set) var end = 0
    /// The offset in the input of `storage[0]`.
    private var base = 0
    private var exhausted = false
    private var line = 1
    /// The offset in the input of the first byte of the current line.
    private var lineStart = 0

    init(source: any HARByteSource) {
        self.source = source
        storage = .allocate(capacity: Self.capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// The offset in the input of the next byte.
    var offset: Int { base + position }

    /// The next byte without consuming it; nil at the end of the input.
    @inline(__always)
    func peek() throws(HARReadError) -> UInt8? {
        if position < end { return storage[position] }
        return try fill(1) ? storage[position] : nil
    }

    /// The byte `distance` after the next one, reading on if needed; nil past the end.
    func peek(at distance: Int) throws(HARReadError) -> UInt8? {
        precondition(distance < 16)
        if position + distance < end { return storage[position + distance] }
        return try fill(distance + 1) ? storage[position + distance] : nil
    }

    @inline(__always)
    func advance(_ count: Int = 1) {
        position += count
    }

    /// Skips JSON whitespace, counting lines.
    func skipWhitespace() throws(HARReadError) {
        while true {
            while position < end {
                switch storage[position] {
                case 0x20, 0x09, 0x0D:
                    position += 1
                case 0x0A:
                    position += 1
                    line += 1
                    lineStart = base + position
                default:
                    return
                }
            }
            guard try fill(1) else { return }
        }
    }

    /// The bytes available from the next one without reading (at least one unless at the end);
    /// `body` returns how many it consumed.
    func withAvailableBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> (consumed: Int, result: T)) throws -> T? {
        guard try peek() != nil else { return nil }
        let (consumed, result) = try body(UnsafeBufferPointer(start: storage + position, count: end - position))
        position += consumed
        return result
    }

    /// `line 3, column 7` for the next byte (1-based; columns count bytes).
    func location() -> String {
        location(ofOffset: offset)
    }

    /// The location of an earlier byte of the current line.
    func location(ofOffset offset: Int) -> String {
        "line \(line), column \(offset - lineStart + 1)"
    }

    /// Makes at least `count` bytes available from `position`; false when the input ends first.
    private func fill(_ count: Int) throws(HARReadError) -> Bool {
        while end - position < count {
            if exhausted { return false }
            if position > 0 {
                let kept = end - position
                if kept > 0 { memmove(storage, storage + position, kept) }
                base += position
                end = kept
                position = 0
            }
            let read = try source.read(into: UnsafeMutableRawBufferPointer(start: storage + end, count: Self.capacity - end))
            if read == 0 { exhausted = true } else { end += read }
        }
        return true
    }
}
