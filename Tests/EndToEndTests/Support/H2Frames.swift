import Foundation

/// Hand-made HTTP/2 frames (RFC 9113 §4, §6) with HPACK literals and indexes (RFC 7541 §6), for
/// tests that send what no well-behaved client would: resets, CONTINUATION and control-frame
/// floods, header bombs. `parse` reads back the frames the proxy sent.
enum H2Frames {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Kind: UInt8 {
        case data = 0, headers = 1, rstStream = 3, settings = 4, ping = 6, goAway = 7, windowUpdate = 8, continuation = 9
    }

    static let endStream: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let ack: UInt8 = 0x1

    struct Frame {
        var kind: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]

        /// A GOAWAY's error code (RFC 9113 §7), nil for other frames.
        var goAwayCode: UInt32? {
            guard kind == Kind.goAway.rawValue, payload.count >= 8 else { return nil }
            return payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    static func frame(_ kind: Kind, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        var bytes: [UInt8] = [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), kind.rawValue, flags]
        bytes += [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
        return bytes + payload
    }

    /// The client preface and an empty SETTINGS frame.
    static var opening: [UInt8] { preface + frame(.settings) }

    static func rstStream(_ stream: UInt32, code: UInt32 = 8) -> [UInt8] {
        frame(.rstStream, stream: stream, [UInt8(code >> 24), UInt8(code >> 16 & 0xFF), UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)])
    }

    static func windowUpdate(_ stream: UInt32, increment: UInt32) -> [UInt8] {
        frame(.windowUpdate, stream: stream,
              [UInt8(increment >> 24 & 0x7F), UInt8(increment >> 16 & 0xFF), UInt8(increment >> 8 & 0xFF), UInt8(increment & 0xFF)])
    }

    static func ping(_ value: UInt64) -> [UInt8] {
        frame(.ping, (0..<8).map { UInt8(value >> (56 - 8 * $0) & 0xFF) })
    }

    // MARK: HPACK

    /// An integer with an N-bit prefix (RFC 7541 §5.1); `first` holds the bits above the prefix.
    static func integer(_ value: Int, prefixBits: Int, first: UInt8) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else { return [first | UInt8(value)] }
        var bytes = [first | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    /// A literal field with a new name, added to the dynamic table when `indexing`.
    static func literal(_ name: String, _ value: String, indexing: Bool = false) -> [UInt8] {
        integer(0, prefixBits: indexing ? 6 : 4, first: indexing ? 0x40 : 0x00)
            + integer(name.utf8.count, prefixBits: 7, first: 0) + Array(name.utf8)
            + integer(value.utf8.count, prefixBits: 7, first: 0) + Array(value.utf8)
    }

    static func indexed(_ index: Int) -> [UInt8] {
        integer(index, prefixBits: 7, first: 0x80)
    }

    /// The four pseudo-fields of a GET.
    static func requestBlock(path: String, authority: String) -> [UInt8] {
        literal(":method", "GET") + literal(":scheme", "https") + literal(":path", path) + literal(":authority", authority)
    }

    // MARK: reading

    /// The complete frames at the start of `data` (after the server's preface, which is a frame).
    static func parse(_ data: Data) -> [Frame] {
        let bytes = [UInt8](data)
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            let stream = bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(Frame(kind: bytes[offset + 3], flags: bytes[offset + 4], stream: stream,
                                payload: Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        return frames
    }
}
