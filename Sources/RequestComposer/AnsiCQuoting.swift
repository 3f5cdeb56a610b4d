/// Reads bash's `$'…'` (ANSI-C quoting), which Chrome's "Copy as cURL (bash)" uses for any value
/// holding a `'`, a `!` or a control character (`$'{"a":"it\'s\\n"}'`, `\u0021` for `!`).
///
/// Escapes as bash reads them: `\a \b \e \E \f \n \r \t \v \\ \' \" \?`, octal `\NNN`, `\xHH`,
/// `\uHHHH`, `\UHHHHHHHH` (written as UTF-8) and `\cX`; an unknown escape keeps its backslash.
/// A NUL byte is refused: bash would cut the argument there, silently.
enum AnsiCQuoting {
    /// Reads from just after `$'` to just after the closing `'`, appending the value to `word`.
    static func read(_ input: [UInt8], at index: inout Int, line: inout Int, into word: inout [UInt8]) throws(ComposeError) {
        let start = line
        func byte(_ offset: Int) -> UInt8? { index + offset < input.count ? input[index + offset] : nil }
        while let current = byte(0) {
            if current == UInt8(ascii: "'") {
                index += 1
                return
            }
            guard current == UInt8(ascii: "\\"), let escape = byte(1) else {
                if current == 0x0A { line += 1 }
                word.append(current)
                index += 1
                continue
            }
            index += 2
            var value: UInt32?
            if let mapped = simpleEscape(escape) {
                word.append(mapped)
                continue
            }
            switch escape {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var number = UInt32(escape - 0x30)
                var count = 1
                while count < 3, let digit = byte(0), (0x30...0x37).contains(digit) {
                    number = number * 8 + UInt32(digit - 0x30)
                    index += 1
                    count += 1
                }
                // Bash keeps the low 8 bits (`\400` is NUL): check what is kept.
                guard UInt8(truncatingIfNeeded: number) != 0 else { throw nul(start) }
                word.append(UInt8(truncatingIfNeeded: number))
                continue
            case UInt8(ascii: "x"):
                value = hex(input, at: &index, maxDigits: 2)
                if let number = value {
                    guard number != 0 else { throw nul(start) }
                    word.append(UInt8(number))
                    continue
                }
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                value = hex(input, at: &index, maxDigits: escape == UInt8(ascii: "u") ? 4 : 8)
                if let number = value {
                    guard number != 0 else { throw nul(start) }
                    guard let scalar = Unicode.Scalar(number) else {
                        throw ComposeError(line: start, message: "$'…' holds \\u escape of a code point that is not a character: fix the escape")
                    }
                    word += Array(String(scalar).utf8)
                    continue
                }
            case UInt8(ascii: "c"):
                if let control = byte(0) {
                    index += 1
                    let number = control & 0x1F
                    guard number != 0 else { throw nul(start) }
                    word.append(number)
                    continue
                }
            default:
                break
            }
            // Unknown escape, or `\x`/`\u` with no digits: bash keeps it as written.
            word.append(UInt8(ascii: "\\"))
            word.append(escape)
        }
        throw ComposeError(line: start, message: "a $' quote opened here is never closed: add the closing '")
    }

    private static func simpleEscape(_ escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "a"): return 0x07
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "e"), UInt8(ascii: "E"): return 0x1B
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        case UInt8(ascii: "v"): return 0x0B
        case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "?"): return escape
        default: return nil
        }
    }

    private static func hex(_ input: [UInt8], at index: inout Int, maxDigits: Int) -> UInt32? {
        var number: UInt32 = 0
        var count = 0
        while count < maxDigits, index < input.count, let digit = hexValue(input[index]) {
            number = number * 16 + UInt32(digit)
            index += 1
            count += 1
        }
        return count == 0 ? nil : number
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    private static func nul(_ line: Int) -> ComposeError {
        ComposeError(line: line, message: "$'…' holds a NUL byte (\\0), which a shell cannot pass to curl: remove it")
    }
}
