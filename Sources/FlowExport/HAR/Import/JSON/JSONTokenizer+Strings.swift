import ProxyModel

/// String contents: read after `.key` or `.string`, decoded (escapes resolved, surrogate pairs
/// joined) into UTF-8 bytes that are handed out in pieces as the input is read, so a string can
/// be longer than any buffer. Bytes that are not UTF-8 are passed on as they are (the reader
/// turns them into U+FFFD).
extension JSONTokenizer {
    /// The content of the pending string, or nil when it is longer than `limit` bytes (it is
    /// consumed either way).
    func readString(limit: Int) throws -> [UInt8]? {
        var bytes: [UInt8] = []
        var tooLong = false
        try readString { piece in
            guard !tooLong else { return }
            if bytes.count + piece.count > limit {
                tooLong = true
                bytes = []
            } else {
                bytes.append(contentsOf: piece)
            }
        }
        return tooLong ? nil : bytes
    }

    /// Hands the pending string's content to `consume` in pieces, in order.
    func readString(into consume: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        precondition(stringPending, "no string to read")
        stringPending = false
        while true {
            let found: UInt8?? = try input.withAvailableBytes { bytes in
                var index = 0
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                    index += 1
                }
                if index > 0 { consume(UnsafeBufferPointer(rebasing: bytes[0..<index])) }
                return (index, index < bytes.count ? bytes[index] : nil)
            }
            // nil: the input ended; .some(nil): the bytes available were all content.
            guard let stop = found else { throw endOfFile() }
            switch stop {
            case nil:
                continue
            case UInt8(ascii: "\"")?:
                input.advance()
                return
            case UInt8(ascii: "\\")?:
                try escape(into: consume)
            case let byte?:
                throw JSONSyntaxError(message: "control character (byte \(byte)) inside a string at \(input.location())")
            }
        }
    }

    /// Skips the pending string.
    func skipString() throws {
        try readString { _ in }
    }

    /// `\n`, `\u00e9`, or a surrogate pair `\ud83d\ude00`; a lone surrogate is an error
    /// (Foundation refuses it without saying where).
    private func escape(into consume: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        let start = input.offset
        input.advance()
        guard let byte = try input.peek() else { throw endOfFile() }
        guard byte == UInt8(ascii: "u") else {
            let decoded: UInt8
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded = byte
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            case UInt8(ascii: "n"): decoded = 0x0A
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "t"): decoded = 0x09
            default: throw unexpected("an escape character")
            }
            input.advance()
            emit(UInt32(decoded), into: consume)
            return
        }
        let unit = try unicodeEscape()
        switch unit {
        case 0xDC00...0xDFFF:
            throw loneSurrogate(at: start)
        case 0xD800...0xDBFF:
            guard try input.peek() == UInt8(ascii: "\\"), try input.peek(at: 1) == UInt8(ascii: "u") else {
                throw loneSurrogate(at: start)
            }
            input.advance()
            let low = try unicodeEscape()
            guard (0xDC00...0xDFFF).contains(low) else { throw loneSurrogate(at: start) }
            emit(0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00), into: consume)
        default:
            emit(UInt32(unit), into: consume)
        }
    }

    /// The UTF-16 unit of `uXXXX` at the next byte (which is left after it).
    private func unicodeEscape() throws -> UInt16 {
        input.advance()  // the `u`
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = try input.peek() else { throw endOfFile() }
            guard let digit = PercentDecoding.hexValue(byte) else { throw unexpected("a hex digit of a \\u escape") }
            unit = unit << 4 | UInt16(digit)
            input.advance()
        }
        return unit
    }

    private func loneSurrogate(at offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(message: "invalid \\u escape (lone surrogate) at \(input.location(ofOffset: offset))")
    }

    /// Passes the UTF-8 bytes of `scalar` to `consume` without allocating.
    private func emit(_ scalar: UInt32, into consume: (UnsafeBufferPointer<UInt8>) -> Void) {
        var bytes: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let count: Int
        switch scalar {
        case 0..<0x80:
            bytes.0 = UInt8(scalar)
            count = 1
        case 0x80..<0x800:
            bytes = (UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F), 0, 0)
            count = 2
        case 0x800..<0x10000:
            bytes = (UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F), 0)
            count = 3
        default:
            bytes = (UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F),
                     UInt8(0x80 | scalar & 0x3F))
            count = 4
        }
        withUnsafeBytes(of: &bytes) { raw in
            consume(UnsafeBufferPointer(start: raw.bindMemory(to: UInt8.self).baseAddress, count: count))
        }
    }
}
