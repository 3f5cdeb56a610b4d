/// Writes a JSON string's contents from UTF-8 bytes, escaped: the one escaper behind the
/// capture store's header JSON (every captured flow, on the writer thread) and the HAR export
/// (a million entries, streamed). It works on bytes and copies unescaped runs whole, because
/// both run per field at tens of thousands of flows per second; `JSONEncoder` costs far more.
///
/// `.required` escapes what JSON requires: `"`, `\` and the controls below U+0020 (`\b \f \n
/// \r \t`, the rest as `\u00XX`); everything else, non-ASCII included, passes through.
/// `.terminalSafe` also escapes what a terminal must not receive raw (`TerminalText.isUnsafe`:
/// DEL, C1 controls, bidi overrides and isolates) and U+2028/U+2029 (old JavaScript parsers
/// reject them in strings), and writes `\b`/`\f` as `\u0008`/`\u000c`: so a HAR printed with
/// `cat` cannot drive the terminal. Both decode to the same string.
///
/// The input must be valid UTF-8 (a `String`'s bytes, or bytes the caller repaired); invalid
/// bytes are copied as they are.
public enum JSONStringEscaper {
    public enum Policy: Sendable {
        case required
        case terminalSafe
    }

    /// `string` as a quoted JSON string appended to `out`.
    public static func appendQuoted(_ string: String, to out: inout [UInt8], policy: Policy) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { appendEscaped($0, to: &out, policy: policy) }
        out.append(UInt8(ascii: "\""))
    }

    /// `bytes` escaped (no quotes) appended to `out`.
    ///
    /// One loop per policy: each is the tightest scan for its case (the per-byte test is most of
    /// the cost), and unescaped runs are copied whole.
    public static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8], policy: Policy) {
        switch policy {
        case .required: appendRequiredEscapes(bytes, to: &out)
        case .terminalSafe: appendTerminalSafeEscapes(bytes, to: &out)
        }
    }

    private static func appendRequiredEscapes(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            flush(bytes, from: runStart, to: index, into: &out)
            appendEscape(for: byte, to: &out, shortForms: true)
            runStart = index + 1
        }
        flush(bytes, from: runStart, to: bytes.count, into: &out)
    }

    private static func appendTerminalSafeEscapes(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            var escapedScalar: UInt32? = nil
            var length = 1
            if byte >= 0x80 {
                guard let scalar = escapedMultiByteScalar(bytes, at: index) else {
                    index += 1
                    continue
                }
                escapedScalar = scalar.value
                length = scalar.length
            }
            flush(bytes, from: runStart, to: index, into: &out)
            if let escapedScalar {
                appendUnicodeEscape(UInt16(escapedScalar), to: &out)
            } else {
                appendEscape(for: byte, to: &out, shortForms: false)
            }
            index += length
            runStart = index
        }
        flush(bytes, from: runStart, to: count, into: &out)
    }

    private static func flush(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into out: inout [UInt8]) {
        if start < end {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
    }

    /// The scalar starting at `index` when it is one `.terminalSafe` escapes although JSON allows
    /// it raw: C1 controls (`C2 80`–`C2 9F`), U+2028/U+2029 and the bidi controls U+202A–U+202E
    /// (`E2 80 A8`–`E2 80 AE`), U+2066–U+2069 (`E2 81 A6`–`E2 81 A9`); nil for anything else.
    private static func escapedMultiByteScalar(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int)
        -> (value: UInt32, length: Int)?
    {
        let byte = bytes[index]
        if byte == 0xC2 {
            guard index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) else { return nil }
            return (UInt32(bytes[index + 1]), 2)
        }
        guard byte == 0xE2, index + 2 < bytes.count else { return nil }
        let second = bytes[index + 1]
        let third = bytes[index + 2]
        if second == 0x80, (0xA8...0xAE).contains(third) { return (0x2000 + UInt32(third - 0x80), 3) }
        if second == 0x81, (0xA6...0xA9).contains(third) { return (0x2040 + UInt32(third - 0x80), 3) }
        return nil
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `\u` and four hex digits.
    private static func appendUnicodeEscape(_ unit: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        out.append(UInt8(ascii: "u"))
        out.append(hexDigits[Int(unit >> 12)])
        out.append(hexDigits[Int(unit >> 8 & 0xF)])
        out.append(hexDigits[Int(unit >> 4 & 0xF)])
        out.append(hexDigits[Int(unit & 0xF)])
    }

    private static func appendEscape(for byte: UInt8, to out: inout [UInt8], shortForms: Bool) {
        switch byte {
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
        case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
        case 0x08 where shortForms: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
        case 0x0C where shortForms: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
        default: appendUnicodeEscape(UInt16(byte), to: &out)
        }
    }
}
