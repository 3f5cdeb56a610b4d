/// Checks that bytes arriving in pieces are UTF-8 (Unicode Table 3-7: no overlongs, no surrogates,
/// nothing past U+10FFFF), so a text message split anywhere, even inside a character, is judged as
/// a whole without keeping it. RFC 6455 §8.1 requires text messages to be UTF-8.
struct UTF8StreamValidator: Sendable {
    /// Continuation bytes still due for the current character.
    private var pending = 0
    /// Allowed range of the next continuation byte (narrower right after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    /// A byte broke the rules; stays so.
    private(set) var isInvalid = false

    /// Every byte so far was valid and no character is left half-finished.
    var isComplete: Bool { !isInvalid && pending == 0 }

    mutating func validate(_ bytes: some Sequence<UInt8>) {
        guard !isInvalid else { return }
        for byte in bytes where !accept(byte) {
            isInvalid = true
            return
        }
    }

    private mutating func accept(_ byte: UInt8) -> Bool {
        if pending > 0 {
            guard byte >= lower, byte <= upper else { return false }
            pending -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: pending = 1
        case 0xE0: pending = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: pending = 2
        case 0xED: pending = 2; upper = 0x9F
        case 0xF0: pending = 3; lower = 0x90
        case 0xF1...0xF3: pending = 3
        case 0xF4: pending = 3; upper = 0x8F
        default: return false
        }
        return true
    }
}
