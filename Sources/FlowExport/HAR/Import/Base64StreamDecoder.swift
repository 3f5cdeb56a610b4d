/// Decodes base64 (RFC 4648, padded) as it streams in, keeping only the first `limit` decoded
/// bytes and counting the rest, so a 300 MB base64 body costs `limit` bytes of memory.
///
/// Accepts what `Data(base64Encoded:)` accepted of the text with its whitespace removed (HAR
/// writers wrap base64 at 76 columns): ASCII whitespace anywhere, a length that is a multiple of
/// four, one or two `=` only at the very end. Non-ASCII characters are not base64.
struct Base64StreamDecoder {
    let limit: Int
    /// The first `limit` decoded bytes.
    private(set) var bytes: [UInt8] = []
    /// Every decoded byte, kept or not.
    private(set) var decodedCount: Int64 = 0
    /// False from the first character that cannot be base64 at its place.
    private(set) var isValid = true
    private var quartet: UInt32 = 0
    private var quartetCount = 0
    private var padding = 0

    init(limit: Int) {
        self.limit = limit
    }

    mutating func append(_ input: UnsafeBufferPointer<UInt8>) {
        guard isValid else { return }
        for byte in input {
            let value = Self.values[Int(byte)]
            if value < 64 {
                guard padding == 0 else { return invalidate() }
                quartet = quartet << 6 | UInt32(value)
                quartetCount += 1
                if quartetCount == 4 { emit(3) }
            } else if value == Self.whitespace {
                continue
            } else if byte == UInt8(ascii: "=") {
                // `xx==` or `xxx=`: padding fills the last quartet; nothing but whitespace follows.
                guard !paddedQuartetDone, quartetCount + padding >= 2 else { return invalidate() }
                padding += 1
                quartet <<= 6
                if quartetCount + padding == 4 {
                    emit(3 - padding)
                    paddedQuartetDone = true
                }
            } else {
                return invalidate()
            }
        }
    }

    /// True when the text was complete base64 (no quartet left half-filled).
    var isComplete: Bool {
        isValid && quartetCount == 0
    }

    /// The quartet that `=` padding completed has been decoded: the text must end here.
    private var paddedQuartetDone = false

    private mutating func emit(_ count: Int) {
        let room = limit - bytes.count
        if room > 0 {
            bytes.append(UInt8(truncatingIfNeeded: quartet >> 16))
            if count > 1 && room > 1 { bytes.append(UInt8(truncatingIfNeeded: quartet >> 8)) }
            if count > 2 && room > 2 { bytes.append(UInt8(truncatingIfNeeded: quartet)) }
        }
        decodedCount += Int64(count)
        quartet = 0
        quartetCount = 0
    }

    private mutating func invalidate() {
        isValid = false
        bytes = []
    }

    private static let whitespace: UInt8 = 0xFE
    private static let invalid: UInt8 = 0xFF

    /// Each byte's 6-bit value; `whitespace` for ASCII whitespace; `invalid` for anything else
    /// (the `=` is handled on its own).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        for byte in [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D] { table[byte] = whitespace }
        return table
    }()
}
