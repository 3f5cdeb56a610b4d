/// The bytes of a JSON document as UTF-8, whatever Unicode encoding the file is in: UTF-8 with or
/// without a byte order mark, UTF-16 or UTF-32 of either byte order (with a BOM, or recognised by
/// the zero bytes around the first ASCII character, as RFC 4627 describes and `JSONDecoder`
/// did). UTF-8 passes through untouched; the others are transcoded a chunk at a time, anything
/// that is not a valid code point becoming U+FFFD.
final class UnicodeInput: HARByteSource {
    private enum Encoding: Equatable {
        case utf8
        case utf16(bigEndian: Bool)
        case utf32(bigEndian: Bool)

        var unitSize: Int {
            switch self {
            case .utf8: return 1
            case .utf16: return 2
            case .utf32: return 4
            }
        }
    }

    private let source: any HARByteSource
    private let encoding: Encoding
    /// Raw bytes read but not yet handed out (UTF-8) or decoded (the others).
    private var raw: [UInt8]
    /// Transcoded UTF-8 waiting to be handed out, from `pendingStart`.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var highSurrogate: UInt32?
    private var exhausted = false

    private init(source: any HARByteSource, encoding: Encoding, lookahead: [UInt8]) {
        self.source = source
        self.encoding = encoding
        raw = lookahead
    }

    /// Reads the first bytes of `source` to tell its encoding.
    static func utf8(_ source: any HARByteSource) throws(HARReadError) -> UnicodeInput {
        var first: [UInt8] = []
        while first.count < 4, try readChunk(from: source, upTo: 4 - first.count, appendingTo: &first) > 0 {}
        let (encoding, bom) = detect(first)
        return UnicodeInput(source: source, encoding: encoding, lookahead: Array(first.dropFirst(bom)))
    }

    /// Reads at most `count` bytes onto the end of `bytes`; returns how many (0 at the end).
    private static func readChunk(from source: any HARByteSource, upTo count: Int, appendingTo bytes: inout [UInt8])
        throws(HARReadError) -> Int
    {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        let read = try source.read(into: buffer)
        bytes += buffer[0..<read]
        return read
    }

    /// The encoding and the length of its byte order mark.
    private static func detect(_ bytes: [UInt8]) -> (Encoding, Int) {
        let b = bytes + [1, 1, 1, 1]  // so short files index safely; 1 is neither 0 nor a BOM byte
        switch (b[0], b[1], b[2], b[3]) {
        case (0xEF, 0xBB, 0xBF, _): return (.utf8, 3)
        case (0x00, 0x00, 0xFE, 0xFF): return (.utf32(bigEndian: true), 4)
        case (0xFF, 0xFE, 0x00, 0x00): return (.utf32(bigEndian: false), 4)
        case (0xFE, 0xFF, _, _): return (.utf16(bigEndian: true), 2)
        case (0xFF, 0xFE, _, _): return (.utf16(bigEndian: false), 2)
        case (0x00, 0x00, 0x00, _) where bytes.count >= 4: return (.utf32(bigEndian: true), 0)
        case (_, 0x00, 0x00, 0x00) where bytes.count >= 4: return (.utf32(bigEndian: false), 0)
        case (0x00, _, _, _) where bytes.count >= 2: return (.utf16(bigEndian: true), 0)
        case (_, 0x00, _, _) where bytes.count >= 2: return (.utf16(bigEndian: false), 0)
        default: return (.utf8, 0)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(HARReadError) -> Int {
        if encoding == .utf8 {
            guard raw.isEmpty else { return handOut(&raw, from: 0, into: buffer) }
            return try source.read(into: buffer)
        }
        while pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
            guard !exhausted else { return 0 }
            try transcodeMore()
        }
        let count = handOut(&pending, from: pendingStart, into: buffer)
        pendingStart += count
        return count
    }

    /// Copies what fits; for `raw` (UTF-8 lookahead) the copied bytes are removed.
    private func handOut(_ bytes: inout [UInt8], from start: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
        if encoding == .utf8 { bytes.removeFirst(count) }
        return count
    }

    /// Reads a chunk and turns its complete code units into UTF-8 in `pending`.
    private func transcodeMore() throws(HARReadError) {
        let count = try Self.readChunk(from: source, upTo: 64 * 1024, appendingTo: &raw)
        let size = encoding.unitSize
        let whole = raw.count - raw.count % size
        var index = 0
        while index < whole {
            decode(unit(at: index))
            index += size
        }
        raw.removeFirst(whole)
        if count == 0 {
            exhausted = true
            if !raw.isEmpty || highSurrogate != nil { append(0xFFFD) }
            raw = []
            highSurrogate = nil
        }
    }

    private func unit(at index: Int) -> UInt32 {
        switch encoding {
        case .utf16(let bigEndian):
            return bigEndian ? UInt32(raw[index]) << 8 | UInt32(raw[index + 1]) : UInt32(raw[index + 1]) << 8 | UInt32(raw[index])
        case .utf32(let bigEndian):
            let bytes = bigEndian ? raw[index..<index + 4].map { UInt32($0) } : raw[index..<index + 4].reversed().map { UInt32($0) }
            return bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
        case .utf8:
            return UInt32(raw[index])
        }
    }

    private func decode(_ unit: UInt32) {
        if case .utf16 = encoding {
            if let high = highSurrogate {
                highSurrogate = nil
                if (0xDC00...0xDFFF).contains(unit) {
                    append(0x10000 + (high - 0xD800) << 10 + (unit - 0xDC00))
                    return
                }
                append(0xFFFD)
            }
            if (0xD800...0xDBFF).contains(unit) {
                highSurrogate = unit
                return
            }
        }
        append(Unicode.Scalar(unit) == nil ? 0xFFFD : unit)
    }

    private func append(_ scalar: UInt32) {
        pending.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
    }
}
