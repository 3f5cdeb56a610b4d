import ProxyCore
import SeededRandom

/// Builds WebSocket frames byte by byte as RFC 6455 §5.2 lays them out, independently of the
/// reader under test, and feeds transcripts to readers in every way a relay may cut them.
public enum WebSocketFrames {
    public static let clientMask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// One frame. `mask` nil: unmasked. `lengthBytes` forces the 2- or 8-byte length form.
    public static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0,
                      mask: [UInt8]? = nil, lengthBytes: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let form = lengthBytes ?? (payload.count < 126 ? 0 : payload.count <= 0xFFFF ? 2 : 8)
        switch form {
        case 0: bytes.append(maskBit | UInt8(payload.count))
        case 2: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [maskBit | 127] + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (56 - 8 * $0)) }
        }
        guard let mask else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// A client frame (masked).
    public static func client(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
        frame(opcode, payload, fin: fin, rsv: rsv, mask: clientMask)
    }

    public static func closeBody(_ code: UInt16, _ reason: String) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    /// All of `bytes` through `reader`, cut at the given offsets.
    public static func feed(_ bytes: [UInt8], to reader: inout WebSocketFrameReader, cuts: [Int]) -> [WebSocketMessage] {
        var messages: [WebSocketMessage] = []
        var start = 0
        for cut in cuts.sorted() + [bytes.count] where cut >= start {
            messages += reader.feed(bytes[start..<cut])
            start = cut
        }
        return messages
    }

    /// Every way of cutting the transcript the tests try: whole; one byte at a time; in two at
    /// every position; 200 random cuttings (seeded). Each with a fresh reader from `make`.
    public static func cuttings(of count: Int, seed: UInt64) -> [[Int]] {
        var result: [[Int]] = [[], Array(0..<count)]
        result += (1..<max(1, count)).map { [$0] }
        var random = SeededRandom(seed: seed)
        for _ in 0..<200 {
            let pieces = Int.random(in: 1...max(1, min(count, 12)), using: &random)
            result.append((0..<pieces).map { _ in Int.random(in: 0...count, using: &random) })
        }
        return result
    }
}
