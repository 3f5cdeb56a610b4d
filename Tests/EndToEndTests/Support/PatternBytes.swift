import Foundation
import NIOCore

/// The deterministic pseudo-random byte stream the test origin serves and uploads are made of.
///
/// It exists so large bodies can be checked exactly without holding them in memory: byte `i` of
/// the stream depends only on `i`, so any chunking yields the same bytes, and every 64 KiB block
/// is the same random table rotated by an amount that depends on the block's index, so a lost,
/// repeated or reordered block shows up. Producing a range is two `memcpy`s per block, which
/// keeps a 50 MB body cheap even in a debug build.
enum PatternBytes {
    static let blockSize = 65_536

    /// 64 KiB from a fixed-seed xorshift64*, computed once.
    static let table: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: blockSize)
        var index = 0
        while index < blockSize {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            var word = state &* 0x2545_F491_4F6C_DD1D
            for _ in 0..<8 {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }()

    /// Calls `body` with consecutive slices that together are bytes `offset..<offset+count`.
    static func forEachSlice(offset: Int, count: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        precondition(offset >= 0 && count >= 0)
        table.withUnsafeBytes { table in
            var position = offset
            let end = offset + count
            while position < end {
                let block = position / blockSize
                let inBlock = position % blockSize
                let length = min(blockSize - inBlock, end - position)
                let start = (inBlock + block &* 7_919) % blockSize
                let first = min(length, blockSize - start)
                body(UnsafeRawBufferPointer(rebasing: table[start..<(start + first)]))
                if first < length {
                    body(UnsafeRawBufferPointer(rebasing: table[0..<(length - first)]))
                }
                position += length
            }
        }
    }

    /// Bytes `offset..<offset+count` of the stream.
    static func data(offset: Int = 0, count: Int) -> Data {
        var data = Data(capacity: count)
        forEachSlice(offset: offset, count: count) { data.append(contentsOf: $0) }
        return data
    }

    /// Appends bytes `offset..<offset+count` of the stream to `buffer`.
    static func write(offset: Int, count: Int, into buffer: inout ByteBuffer) {
        forEachSlice(offset: offset, count: count) { buffer.writeBytes($0) }
    }

    /// Writes the first `count` bytes of the stream to a new file at `url`, 1 MiB at a time.
    static func writeFile(_ url: URL, count: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset = 0
        while offset < count {
            let length = min(1 << 20, count - offset)
            try handle.write(contentsOf: data(offset: offset, count: length))
            offset += length
        }
    }

    /// Where the file at `url` first differs from the stream's first `expectedCount` bytes, or
    /// nil when it is exactly those bytes. A length mismatch is reported at the shorter length.
    static func firstMismatch(inFile url: URL, expectedCount: Int) throws -> Int? {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var offset = 0
        // Bounded: at most expectedCount / 1 MiB + 1 reads of data, plus one read past the end.
        while true {
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty {
                return offset == expectedCount ? nil : offset
            }
            if offset + chunk.count > expectedCount {
                return max(offset, expectedCount)
            }
            let expected = data(offset: offset, count: chunk.count)
            if chunk != expected {
                let index = zip(chunk, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? 0
                return offset + index
            }
            offset += chunk.count
        }
    }
}
