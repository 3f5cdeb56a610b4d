/// Turns the bytes a terminal sends into `Key`s: UTF-8 text, control keys, Alt plus a character,
/// CSI and SS3 escape sequences and SGR mouse reports.
///
/// Stateful across reads because a read can end anywhere: in the middle of a UTF-8 character or
/// an escape sequence. Incomplete input waits for the next `feed`. A lone ESC is ambiguous (the
/// Escape key, or the start of a sequence still in flight), so it waits too until the caller,
/// after ~30 ms with no further byte, calls `flushPendingEscape()`. Sequences we do not know are
/// swallowed whole, never turned into stray characters.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []
    /// Longer "sequences" are garbage: dropped so a broken stream cannot grow the buffer.
    private static let maximumSequenceLength = 64
    static let maximumMouseCoordinate = 10_000

    public init() {}

    /// True while bytes of an unfinished character or sequence are held back.
    public var hasPending: Bool { !pending.isEmpty }

    /// Decodes `bytes` (appended to any held-back ones) into keys; holds back an unfinished tail.
    public mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            switch decode(at: index) {
            case .key(let key, let length):
                keys.append(key)
                index += length
            case .skip(let length):
                index += length
            case .incomplete:
                if pending.count - index > Self.maximumSequenceLength {
                    index = pending.count  // garbage that never ends: drop it
                } else {
                    pending.removeFirst(index)
                    return keys
                }
            }
        }
        pending.removeAll()
        return keys
    }

    /// Called when no byte followed for a while: a held-back lone ESC was the Escape key.
    /// Any other unfinished sequence is dropped (a truncated report, not typing).
    public mutating func flushPendingEscape() -> [Key] {
        defer { pending.removeAll() }
        return pending == [0x1B] ? [.escape] : []
    }

    private enum Step {
        case key(Key, length: Int)
        case skip(length: Int)
        case incomplete
    }

    private func decode(at start: Int) -> Step {
        let byte = pending[start]
        switch byte {
        case 0x1B: return decodeEscape(at: start)
        case 0x0D, 0x0A: return .key(.enter, length: 1)
        case 0x09: return .key(.tab, length: 1)
        case 0x7F, 0x08: return .key(.backspace, length: 1)
        case 0x01...0x1A:
            return .key(.control(Character(Unicode.Scalar(byte + 0x60))), length: 1)
        case 0x00, 0x1C...0x1F: return .skip(length: 1)
        case 0x20...0x7E: return .key(.character(Character(Unicode.Scalar(byte))), length: 1)
        default: return decodeUTF8(at: start)
        }
    }

    private func decodeUTF8(at start: Int) -> Step {
        let lead = pending[start]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .skip(length: 1)  // a stray continuation byte or invalid lead
        }
        var available = 1
        while available < length, start + available < pending.count {
            guard pending[start + available] & 0xC0 == 0x80 else { return .skip(length: available) }
            available += 1
        }
        if available < length { return .incomplete }
        let text = String(decoding: pending[start..<start + length], as: UTF8.self)
        guard let scalar = text.unicodeScalars.first, scalar != "\u{FFFD}" || text == "\u{FFFD}",
              !(0x80..<0xA0).contains(scalar.value) else { return .skip(length: length) }
        return .key(.character(Character(scalar)), length: length)
    }

    private func decodeEscape(at start: Int) -> Step {
        guard start + 1 < pending.count else { return .incomplete }
        switch pending[start + 1] {
        case UInt8(ascii: "["): return decodeCSI(at: start)
        case UInt8(ascii: "O"):
            guard start + 2 < pending.count else { return .incomplete }
            let key = ss3Key(pending[start + 2])
            return key.map { .key($0, length: 3) } ?? .skip(length: 3)
        case 0x20...0x7E:
            // ESC then a printable character: Alt-x (readline's Alt-B/F in prompts).
            return .key(.alt(Character(Unicode.Scalar(pending[start + 1]))), length: 2)
        case 0x7F, 0x08:
            return .key(.alt(Key.altBackspace), length: 2)  // Alt-Backspace: delete a word back
        default:
            // ESC then something else (a control key, ESC, UTF-8): Escape, then that on its own.
            return .key(.escape, length: 1)
        }
    }

    private func ss3Key(_ final: UInt8) -> Key? {
        if final >= UInt8(ascii: "P"), final <= UInt8(ascii: "S") { return .function(Int(final - UInt8(ascii: "P")) + 1) }
        return cursorKey(final)
    }

    /// The final letters CSI and SS3 share: arrows, Home and End.
    private func cursorKey(_ final: UInt8) -> Key? {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        default: return nil
        }
    }

    /// `ESC [`, parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, one final byte 0x40-0x7E.
    private func decodeCSI(at start: Int) -> Step {
        var index = start + 2
        while index < pending.count, (0x20...0x3F).contains(pending[index]) { index += 1 }
        guard index < pending.count else { return .incomplete }
        let final = pending[index]
        guard (0x40...0x7E).contains(final) else { return .skip(length: index - start) }  // broken: drop it
        let parameters = String(decoding: pending[start + 2..<index], as: UTF8.self)
        let length = index - start + 1
        if final == UInt8(ascii: "M"), parameters.isEmpty {
            // An X10 mouse report (`ESC [ M` and three raw bytes): swallow all of it.
            return start + length + 3 <= pending.count ? .skip(length: length + 3) : .incomplete
        }
        let key = csiKey(parameters: parameters, final: final)
        return key.map { .key($0, length: length) } ?? .skip(length: length)
    }

    private func csiKey(parameters: String, final: UInt8) -> Key? {
        if parameters.hasPrefix("<") {
            return final == UInt8(ascii: "M") ? mouseKey(String(parameters.dropFirst())) : nil
        }
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        switch final {
        case UInt8(ascii: "Z"): return .backTab
        case UInt8(ascii: "~"): return tildeKey(numbers.first ?? nil)
        default: return cursorKey(final)
        }
    }

    private func tildeKey(_ number: Int?) -> Key? {
        guard let number else { return nil }
        switch number {
        case 1, 7: return .home
        case 2: return .insert
        case 3: return .delete
        case 4, 8: return .end
        case 5: return .pageUp
        case 6: return .pageDown
        case 11...15: return .function(number - 10)
        case 17...21: return .function(number - 11)
        case 23, 24: return .function(number - 12)
        default: return nil
        }
    }

    /// An SGR mouse press `button;column;row` (1-based): wheel up, wheel down or a left click.
    private func mouseKey(_ parameters: String) -> Key? {
        let numbers = parameters.split(separator: ";").compactMap { Int($0) }
        // No terminal is 10,000 cells wide or tall: larger numbers are garbage (pasted text),
        // and would overflow arithmetic downstream.
        guard numbers.count == 3, (1...Self.maximumMouseCoordinate).contains(numbers[1]),
              (1...Self.maximumMouseCoordinate).contains(numbers[2]) else { return nil }
        switch numbers[0] {
        case 64: return .mouseWheelUp
        case 65: return .mouseWheelDown
        case 0: return .mouseClick(row: numbers[2] - 1, column: numbers[1] - 1)
        default: return nil
        }
    }
}
